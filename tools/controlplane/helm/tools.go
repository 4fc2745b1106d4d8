//go:build tools

// Package tools pins helm's command.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
