//go:build tools

// Package deps pins the modules the project builds on, until code imports each of them.
package deps

import (
	_ "github.com/gin-gonic/gin"
	_ "github.com/go-sql-driver/mysql"
	_ "github.com/opentelekomcloud/gophertelekomcloud/openstack"
	_ "github.com/opentelekomcloud/gophertelekomcloud/openstack/identity/v3/credentials"
	_ "github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v1/subnets"
	_ "github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v1/vpcs"
	_ "github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v2/extensions/security/groups"
	_ "github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/backups"
	_ "github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/flavors"
	_ "github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	_ "github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/logs"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/prometheus/client_golang/prometheus/testutil"
	_ "github.com/stretchr/testify/assert"
	_ "github.com/stretchr/testify/require"
	_ "k8s.io/api/batch/v1"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/apimachinery/pkg/apis/meta/v1"
	_ "sigs.k8s.io/yaml"
)
