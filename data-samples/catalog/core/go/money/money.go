// Package money formats amounts kept in cents.
package money

import "fmt"

// Format writes an amount of cents as dollars and cents, e.g. "$12.50".
func Format(cents int64) string {
	return fmt.Sprintf("$%d.%02d", cents/100, cents%100)
}
