// Package main hosts TestFlaky; the harness builds it with go test -c.
package main

func main() {}
