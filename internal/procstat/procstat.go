// Package procstat reads what a finished child process used, for the
// benchmarks that compare kpipe with kustomize. It imports only the
// standard library; the platform-specific parts sit in _unix.go and
// _windows.go files.
package procstat
