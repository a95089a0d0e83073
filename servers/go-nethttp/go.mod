module netbench/servers/go-nethttp

go 1.22
