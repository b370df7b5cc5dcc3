package v1alpha1

// ConditionInstanceDuplicates is True while OTC lists further instances that belong to this
// object (a lost create race): the controller keeps one and reports the others, never deleting
// them. It is present only while there are such instances.
const ConditionInstanceDuplicates = "InstanceDuplicates"
