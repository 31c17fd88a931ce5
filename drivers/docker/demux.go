package docker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Stream kinds in the header of a multiplexed frame.
const (
	streamStdin  = 0
	streamStdout = 1
	streamStderr = 2
	streamSystem = 3 // an error from the daemon (exec, attach)
)

// maxFrame bounds a frame's size so that a corrupt header cannot make the
// demuxer allocate without limit.
const maxFrame = 64 << 20

// demux copies the Engine API's multiplexed stream (used for a container
// without a TTY by logs, attach and exec) from r into stdout and stderr
// until r ends. Each frame is an 8-byte header, [kind, 0, 0, 0, size as
// big-endian uint32], followed by size bytes of kind's output. A frame of
// the system kind is returned as an error.
func demux(stdout, stderr io.Writer, r io.Reader) error {
	var hdr [8]byte
	buf := make([]byte, 32<<10)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read stream header: %w", err)
		}
		size := int(binary.BigEndian.Uint32(hdr[4:]))
		if size > maxFrame {
			return fmt.Errorf("stream frame of %d bytes exceeds the %d limit", size, maxFrame)
		}
		var w io.Writer
		switch hdr[0] {
		case streamStdin, streamStdout:
			w = stdout
		case streamStderr:
			w = stderr
		case streamSystem:
			msg := make([]byte, size)
			if _, err := io.ReadFull(r, msg); err != nil {
				return fmt.Errorf("read stream error frame: %w", err)
			}
			return fmt.Errorf("docker stream error: %s", msg)
		default:
			return fmt.Errorf("unknown stream kind %d in frame header", hdr[0])
		}
		if size > len(buf) {
			buf = make([]byte, size)
		}
		if _, err := io.ReadFull(r, buf[:size]); err != nil {
			return fmt.Errorf("read stream frame: %w", err)
		}
		if _, err := w.Write(buf[:size]); err != nil {
			return fmt.Errorf("write stream frame: %w", err)
		}
	}
}
