module github.com/ibtool/ibtool

go 1.26.8

require (
	github.com/ebitengine/purego v0.11.3
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.10
	golang.org/x/sys v0.49.0
)

require github.com/inconshreveable/mousetrap v1.1.0 // indirect
