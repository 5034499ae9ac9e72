module github.com/kpipe/kpipe/tools/fluxoracle

go 1.26.8

require (
	github.com/fluxcd/pkg/envsubst v1.7.0
	github.com/fluxcd/pkg/sourceignore v0.18.0
)
