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
// reader allocate without limit.
const maxFrame = 64 << 20

// readFrames reads the Engine API's multiplexed stream (used for a
// container without a TTY by logs, attach and exec) until r ends, calling
// fn with each frame's stream kind and payload (valid only during the
// call). Each frame is an 8-byte header, [kind, 0, 0, 0, size as
// big-endian uint32], followed by size bytes. A frame of the system kind
// is returned as an error.
func readFrames(r io.Reader, fn func(kind byte, p []byte) error) error {
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
		kind := hdr[0]
		if kind > streamSystem {
			return fmt.Errorf("unknown stream kind %d in frame header", kind)
		}
		if size > len(buf) {
			buf = make([]byte, size)
		}
		if _, err := io.ReadFull(r, buf[:size]); err != nil {
			return fmt.Errorf("read stream frame: %w", err)
		}
		if kind == streamSystem {
			return fmt.Errorf("docker stream error: %s", buf[:size])
		}
		if err := fn(kind, buf[:size]); err != nil {
			return err
		}
	}
}

// demux copies a multiplexed stream's stdout (and stdin) frames to stdout
// and its stderr frames to stderr.
func demux(stdout, stderr io.Writer, r io.Reader) error {
	return readFrames(r, func(kind byte, p []byte) error {
		w := stdout
		if kind == streamStderr {
			w = stderr
		}
		if _, err := w.Write(p); err != nil {
			return fmt.Errorf("write stream frame: %w", err)
		}
		return nil
	})
}
