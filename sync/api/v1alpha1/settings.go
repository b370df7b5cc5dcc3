package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// BackupPolicy is the automated backup policy as OTC reports it.
type BackupPolicy struct {
	// StartTime is the daily backup window, hh:mm-HH:MM in UTC.
	StartTime string `json:"startTime,omitempty"`
	// KeepDays is how many days automated backups are kept; 0: automated backups are off.
	KeepDays int `json:"keepDays,omitempty"`
	// Period is the days of the week backups run, 1 (Monday) to 7 (Sunday), e.g. "1,3,5".
	Period string `json:"period,omitempty"`
}

// StoppedStatus describes a stopped instance.
type StoppedStatus struct {
	// Since is when the controller stopped the instance, or first saw it stopped.
	Since metav1.Time `json:"since"`
	// AutoStart is when OTC starts the instance again by itself: the start of the first
	// maintenance window seven days after Since. The controller then stops it again, once, while
	// spec.stopped is true.
	AutoStart metav1.Time `json:"autoStart"`
}
