// Package procstat runs child processes and reads what they used (wall
// and CPU time, peak RSS), and finds the reference kustomize, for the
// benchmarks that compare kpipe with kustomize. It imports only the
// standard library; the platform-specific parts sit in _unix.go and
// _windows.go files.
package procstat
