// Package manifests tests the deployable files under manifests/: that every YAML document parses,
// that the Rds CRD is a valid structural schema which accepts the samples and rejects known-bad
// objects through the API server's own validation code (OpenAPI, CEL and transition rules), that
// the CRD and the Go API types cannot drift apart, and that the CompositeController and the
// Deployment keep the settings the hooks depend on.
package manifests
