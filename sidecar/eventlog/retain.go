package eventlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"time"
)

// Prune removes the flow's day files older than keepDays days before now (UTC): with
// keepDays 0 only today's file is kept, with 1 today's and yesterday's. It returns the days
// it removed. Only regular files named YYYY-MM-DD.jsonl are touched, through the workspace's
// os.Root: a link or a name of another form in the logs folder is left alone.
func Prune(workspaceRoot, flow string, keepDays int, now time.Time) ([]string, error) {
	if keepDays < 0 {
		return nil, fmt.Errorf("eventlog: retain_days %d is negative", keepDays)
	}
	days, err := Days(workspaceRoot, flow)
	if err != nil || len(days) == 0 {
		return nil, err
	}
	root, err := os.OpenRoot(workspaceRoot)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	oldest := now.UTC().AddDate(0, 0, -keepDays).Format("2006-01-02")
	var removed []string
	var errs []error
	for _, d := range days {
		if d >= oldest {
			break // sorted, oldest first
		}
		name := path.Join(LogsDir, flow, d+".jsonl")
		if st, err := root.Lstat(name); err != nil || !st.Mode().IsRegular() {
			continue
		}
		if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, d)
	}
	return removed, errors.Join(errs...)
}
