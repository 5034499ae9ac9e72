module github.com/kpipe/kpipe/tools/fluxenvsubst

go 1.26.8

require github.com/fluxcd/pkg/envsubst v1.7.0
