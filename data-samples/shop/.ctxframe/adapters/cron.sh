#!/bin/sh
# ctxframe adapter: cron jobs.
#
# Reads ops/crontab and prints one Batch (docs/adapters.md in ctxframe): a `cron:NAME` job node
# per line (NAME from the trailing `# name` comment), declared by the crontab, and a `handles`
# edge from the job to the script it runs. Run from the repository root, as ctxframe does:
# `sh .ctxframe/adapters/cron.sh`. POSIX sh and awk only.
set -eu
awk '
function q(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); gsub(/\t/, " ", s); return "\"" s "\"" }
BEGIN { nodes = ""; edges = "" }
/^[[:space:]]*(#|$)/ { next }
{
    line = $0
    name = ""
    if (index(line, "#") > 0) {
        name = substr(line, index(line, "#") + 1)
        line = substr(line, 1, index(line, "#") - 1)
        gsub(/^[[:space:]]+|[[:space:]]+$/, "", name)
    }
    n = split(line, f, /[[:space:]]+/)
    if (f[1] == "") { for (i = 1; i < n; i++) f[i] = f[i + 1]; n-- }
    schedule = f[1] " " f[2] " " f[3] " " f[4] " " f[5]
    command = f[6]; for (i = 7; i <= n; i++) if (f[i] != "") command = command " " f[i]
    script = f[7]
    if (name == "") name = script
    id = "cron:" name
    sep = (nodes == "") ? "" : ",\n"
    nodes = nodes sep "  {\"id\": " q(id) ", \"kind\": \"job\", \"label\": " q(name) \
        ", \"path\": \"ops/crontab\", \"line_start\": " NR ", \"signature\": " q(schedule) \
        ", \"doc\": " q("runs " command " on schedule " schedule) \
        ", \"transport\": \"schedule.cron\", \"direction\": \"provides\"}"
    sep = (edges == "") ? "" : ",\n"
    edges = edges sep "  {\"src\": \"ops/crontab\", \"dst\": " q(id) \
        ", \"kind\": \"declares\", \"confidence\": \"EXTRACTED\", \"path\": \"ops/crontab\"" \
        ", \"line\": " NR "},\n" \
        "  {\"src\": " q(id) ", \"dst\": " q(script) ", \"kind\": \"handles\"" \
        ", \"confidence\": \"EXTRACTED\", \"name\": " q(command) \
        ", \"path\": \"ops/crontab\", \"line\": " NR "}"
}
END {
    printf "{\"producer\": \"shop.cron\",\n\"nodes\": [\n%s\n],\n\"edges\": [\n%s\n]}\n", nodes, edges
}
' ops/crontab
