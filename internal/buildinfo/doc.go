// Package buildinfo reads what a binary was built from: the module version,
// the VCS commit and time the go command stamps into it, and the Go
// version and platform.
package buildinfo
