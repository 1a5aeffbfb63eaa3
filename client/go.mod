module github.com/interrupthost/interrupthost/client

go 1.22
