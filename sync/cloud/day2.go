package cloud

// Operations are the day-2 changes to a running instance: resize, storage growth, backup policy,
// restart, minor upgrade, single to HA, tags.
type Operations interface{}
