module github.com/acpprobe/acpprobe

go 1.26
