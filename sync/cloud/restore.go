package cloud

// Restores are point-in-time restores into the same instance and restores into a new instance.
type Restores interface{}
