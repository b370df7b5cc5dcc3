package reconcile

import (
	"strings"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// NOTE: every call validates the whole spec, and regular expressions cost a steady sync about
// as much as its decision: the patterns a call checks are plain functions. Each reads as the
// regular expression it stands for, which patterns_test.go holds and checks it against.
var (
	// versionPattern: MySQL `^(5\.7|8\.0)(\.\d+)?$`, PostgreSQL `^(1[0-9])(\.\d+)?$`, SQL Server
	// `^20[0-9]{2}_[A-Z]{2,4}$`.
	versionPattern = map[string]pattern{
		v1alpha1.EngineMySQL: func(s string) bool {
			rest, ok := strings.CutPrefix(s, "5.7")
			if !ok {
				rest, ok = strings.CutPrefix(s, "8.0")
			}
			return ok && dotDigitsOrNothing(rest)
		},
		v1alpha1.EnginePostgreSQL: func(s string) bool {
			return len(s) >= 2 && s[0] == '1' && isDigit(s[1]) && dotDigitsOrNothing(s[2:])
		},
		v1alpha1.EngineSQLServer: func(s string) bool {
			return len(s) >= 7 && len(s) <= 9 && strings.HasPrefix(s, "20") && isDigit(s[2]) && isDigit(s[3]) && s[4] == '_' &&
				all(s[5:], isUpper)
		},
	}
	// flavorPattern: `^rds\.[a-z0-9]+(\.[a-z0-9]+)+$`.
	flavorPattern pattern = func(s string) bool {
		rest, ok := strings.CutPrefix(s, "rds.")
		return ok && dotted(rest, 2, 0, func(i int, part string) bool { return part != "" && all(part, isLowerOrDigit) })
	}
	// azPattern: `^[a-z]{2}-[a-z]{2,}-[0-9]{2}$`.
	azPattern pattern = func(s string) bool {
		return dashed(s, 3, 3, func(i int, part string) bool {
			switch i {
			case 0:
				return len(part) == 2 && all(part, isLower)
			case 1:
				return len(part) >= 2 && all(part, isLower)
			}
			return len(part) == 2 && all(part, isDigit)
		})
	}
	// regionPattern: `^[a-z]{2}-[a-z]{2,}(-[0-9]+)?$`.
	regionPattern pattern = func(s string) bool {
		return dashed(s, 2, 3, func(i int, part string) bool {
			switch i {
			case 0:
				return len(part) == 2 && all(part, isLower)
			case 1:
				return len(part) >= 2 && all(part, isLower)
			}
			return part != "" && all(part, isDigit)
		})
	}
	// resourcePattern: `^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`.
	resourcePattern pattern = func(s string) bool {
		return len(s) >= 1 && len(s) <= 64 && isAlnum(s[0]) && all(s, isNameByte)
	}
	// tagKeyPattern: `^[A-Za-z0-9_.-]{1,36}$`.
	tagKeyPattern pattern = func(s string) bool { return len(s) >= 1 && len(s) <= 36 && all(s, isNameByte) }
	// tagValuePattern: `^[A-Za-z0-9_.-]{0,43}$`.
	tagValuePattern pattern = func(s string) bool { return len(s) <= 43 && all(s, isNameByte) }
)

// pattern is a check of a string, read as a regular expression's MatchString.
type pattern func(string) bool

// MatchString reports whether s matches.
func (p pattern) MatchString(s string) bool { return p(s) }

// dailyWindow is a daily window "hh:mm-HH:MM" in UTC (backupstarttime, maintenancewindow), read
// once: its start and end in minutes of the day. It wraps midnight when it ends before it starts.
type dailyWindow struct{ start, end int }

const minutesPerDay = 24 * 60

// parseDailyWindow reads "hh:mm-HH:MM": two digits each, hours 00 to 23, minutes 00 to 59.
func parseDailyWindow(s string) (dailyWindow, bool) {
	if len(s) != len("hh:mm-HH:MM") || s[5] != '-' {
		return dailyWindow{}, false
	}
	start, ok1 := clockMinutes(s[:5])
	end, ok2 := clockMinutes(s[6:])
	return dailyWindow{start: start, end: end}, ok1 && ok2
}

// clockMinutes reads the five bytes "hh:mm" as minutes of the day.
func clockMinutes(s string) (int, bool) {
	if s[2] != ':' || !isDigit(s[0]) || !isDigit(s[1]) || !isDigit(s[3]) || !isDigit(s[4]) {
		return 0, false
	}
	h, m := int(s[0]-'0')*10+int(s[1]-'0'), int(s[3]-'0')*10+int(s[4]-'0')
	return h*60 + m, h < 24 && m < 60
}

// onQuarterHours reports whether both sides' minutes are 00, 15, 30 or 45.
func (w dailyWindow) onQuarterHours() bool { return w.start%15 == 0 && w.end%15 == 0 }

// lasts reports whether the window is d long, across midnight or not ("00:00-00:00" lasts 0).
func (w dailyWindow) lasts(d time.Duration) bool {
	return (w.end-w.start+minutesPerDay)%minutesPerDay == int(d/time.Minute)
}

// holds reports whether t lies in the window, its start included, its end excluded.
func (w dailyWindow) holds(t time.Time) bool {
	t = t.UTC()
	now := t.Hour()*60 + t.Minute()
	if w.start <= w.end {
		return now >= w.start && now < w.end
	}
	return now >= w.start || now < w.end
}

// startFrom is the first start of the window at or after t, in UTC.
func (w dailyWindow) startFrom(t time.Time) time.Time {
	t = t.UTC()
	at := time.Date(t.Year(), t.Month(), t.Day(), w.start/60, w.start%60, 0, 0, time.UTC)
	if at.Before(t) {
		at = at.Add(24 * time.Hour)
	}
	return at
}

// dotDigitsOrNothing: `^(\.\d+)?$`.
func dotDigitsOrNothing(s string) bool {
	if s == "" {
		return true
	}
	rest, ok := strings.CutPrefix(s, ".")
	return ok && rest != "" && all(rest, isDigit)
}

// dotted reports whether s has between min and max (0: any) parts separated by '.', each ok.
func dotted(s string, min, max int, ok func(i int, part string) bool) bool {
	return parts(s, ".", min, max, ok)
}

// dashed is dotted for parts separated by '-'.
func dashed(s string, min, max int, ok func(i int, part string) bool) bool {
	return parts(s, "-", min, max, ok)
}

func parts(s, sep string, min, max int, ok func(i int, part string) bool) bool {
	n := 0
	for part := range strings.SplitSeq(s, sep) {
		if (max > 0 && n >= max) || !ok(n, part) {
			return false
		}
		n++
	}
	return n >= min
}

// all reports whether every byte of s is ok (true for "").
func all(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(b byte) bool        { return b >= '0' && b <= '9' }
func isLower(b byte) bool        { return b >= 'a' && b <= 'z' }
func isUpper(b byte) bool        { return b >= 'A' && b <= 'Z' }
func isLowerOrDigit(b byte) bool { return isLower(b) || isDigit(b) }
func isAlnum(b byte) bool        { return isLower(b) || isUpper(b) || isDigit(b) }
func isNameByte(b byte) bool     { return isAlnum(b) || b == '_' || b == '.' || b == '-' }
