module example.com/shop/core

go 1.21
