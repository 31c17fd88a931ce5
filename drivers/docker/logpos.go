package docker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// logPositionFile is the file, in the task directory (which the container
// does not see), where the log copy records how far it got, so that the
// driver of a restarted agent resumes exactly there.
const logPositionFile = ".docker-logs.pos"

// logPosition persists the log copy's position: the container ID, the
// daemon timestamp of the newest copied message, and how many copied
// messages carry that timestamp. The record has a fixed width and is
// rewritten in place with one write per message.
type logPosition struct {
	f           *os.File
	containerID string
}

// positionFormat is the record: container ID, Unix nanoseconds, count.
const positionFormat = "%-64s %020d %010d\n"

// openLogPosition opens (creating) the position file in taskDir; an empty
// taskDir records nothing.
func openLogPosition(taskDir, containerID string) (*logPosition, error) {
	if taskDir == "" {
		return nil, nil
	}
	// Never through a link: a volume may show the task dir to the container.
	f, err := os.OpenFile(filepath.Join(taskDir, logPositionFile), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log position: %w", err)
	}
	return &logPosition{f: f, containerID: containerID}, nil
}

// save records the position.
func (p *logPosition) save(last time.Time, atLast int) error {
	if p == nil {
		return nil
	}
	rec := fmt.Sprintf(positionFormat, p.containerID, last.UnixNano(), atLast)
	if _, err := p.f.WriteAt([]byte(rec), 0); err != nil {
		return fmt.Errorf("save log position: %w", err)
	}
	return nil
}

func (p *logPosition) close() {
	if p != nil {
		_ = p.f.Close()
	}
}

// readLogPosition returns the position recorded in taskDir for the
// container; ok is false when there is none for it.
func readLogPosition(taskDir, containerID string) (last time.Time, atLast int, ok bool) {
	if taskDir == "" {
		return time.Time{}, 0, false
	}
	b, err := os.ReadFile(filepath.Join(taskDir, logPositionFile))
	if err != nil {
		return time.Time{}, 0, false
	}
	var id string
	var nanos int64
	if _, err := fmt.Sscanf(string(b), "%s %d %d", &id, &nanos, &atLast); err != nil || id != strings.TrimSpace(containerID) {
		return time.Time{}, 0, false
	}
	if nanos <= 0 {
		return time.Time{}, 0, true // nothing copied yet: from the start
	}
	return time.Unix(0, nanos), atLast, true
}
