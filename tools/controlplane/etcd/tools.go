//go:build tools

// Package tools pins etcd's server command (server/main.go of go.etcd.io/etcd/server/v3).
package tools

import _ "go.etcd.io/etcd/server/v3"
