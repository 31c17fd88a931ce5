package raftbolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// The bbolt file format, as far as walkPages reads it (bbolt stores its
// integers in the machine's byte order; drover runs on little-endian
// machines only, amd64 and arm64).
const (
	pageHeaderSize   = 16 // id u64, flags u16, count u16, overflow u32
	elementSize      = 16 // branch: pos u32, ksize u32, pgid u64; leaf: flags u32, pos u32, ksize u32, vsize u32
	bucketHeaderSize = 16 // root pgid u64, sequence u64; an inline bucket's page follows
	metaMagic        = 0xED0CDAED
	metaChecksumAt   = 56 // the checksum covers the meta's first 56 bytes
	noFreelist       = ^uint64(0)

	flagBranch   = 0x01
	flagLeaf     = 0x02
	flagFreelist = 0x10
	flagBucket   = 0x01 // a leaf element that is a bucket
)

var le = binary.LittleEndian

// pageWalker reads a bbolt file with ordinary reads (no memory map) and
// checks that everything bbolt will reach through it lies inside the file:
// both meta pages, the pages of every bucket, every key and value of
// every element, and the freelist. bbolt itself trusts those bounds and
// reads its memory map past the end of the file when they are damaged, a
// fault that no recover() catches on its own check goroutine; after this
// walk, bbolt's reads stay in bounds.
type pageWalker struct {
	f        *os.File
	size     int64
	pageSize int64
	hwm      uint64 // the meta's high-water mark: pages below it are in use or free
	seen     map[uint64]bool
}

// walkPages checks the bbolt file at path (size bytes long).
func walkPages(path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	defer f.Close()
	w := &pageWalker{f: f, size: size, seen: map[uint64]bool{}}
	root, freelist, err := w.meta()
	if err != nil {
		return err
	}
	if err := w.bucket(root, 0); err != nil {
		return err
	}
	if freelist != noFreelist {
		return w.freelist(freelist)
	}
	return nil
}

// meta reads both meta pages and returns the root page and freelist page
// of the valid one with the higher transaction ID, as bbolt does.
func (w *pageWalker) meta() (root, freelist uint64, err error) {
	var best []byte
	var bestTx uint64
	// The second meta page sits one page in; the page size is in the
	// first (bbolt assumes the OS page size when that one is damaged).
	second := int64(os.Getpagesize())
	for i := range 2 {
		off := int64(0)
		if i == 1 {
			off = second
		}
		m, err := w.readMeta(off)
		if err != nil {
			continue
		}
		if i == 0 {
			second = int64(le.Uint32(m[8:12]))
		}
		if tx := le.Uint64(m[48:56]); best == nil || tx > bestTx {
			best, bestTx = m, tx
		}
	}
	if best == nil {
		return 0, 0, errors.New("neither meta page is valid")
	}
	w.pageSize = int64(le.Uint32(best[8:12]))
	w.hwm = le.Uint64(best[40:48])
	if w.hwm > uint64(w.size/w.pageSize) {
		return 0, 0, fmt.Errorf("the file is %d bytes but its header says %d (cut short?)", w.size, int64(w.hwm)*w.pageSize)
	}
	return le.Uint64(best[16:24]), le.Uint64(best[32:40]), nil
}

// readMeta returns the meta of the meta page at off if it is valid.
func (w *pageWalker) readMeta(off int64) ([]byte, error) {
	m := make([]byte, 64)
	if _, err := w.f.ReadAt(m, off+pageHeaderSize); err != nil {
		return nil, err
	}
	if le.Uint32(m[0:4]) != metaMagic {
		return nil, errors.New("bad magic")
	}
	h := fnv.New64a()
	_, _ = h.Write(m[:metaChecksumAt])
	if h.Sum64() != le.Uint64(m[metaChecksumAt:64]) {
		return nil, errors.New("bad checksum")
	}
	if ps := le.Uint32(m[8:12]); ps < 1024 || ps > 1<<20 || ps&(ps-1) != 0 {
		return nil, fmt.Errorf("page size %d", ps)
	}
	return m, nil
}

// page reads page id with its overflow pages, checking its bounds.
func (w *pageWalker) page(id uint64) ([]byte, error) {
	if id < 2 || id >= w.hwm {
		return nil, fmt.Errorf("page %d is out of bounds (pages 2 to %d)", id, w.hwm-1)
	}
	if w.seen[id] {
		return nil, fmt.Errorf("page %d is reached twice", id)
	}
	w.seen[id] = true
	hdr := make([]byte, pageHeaderSize)
	if _, err := w.f.ReadAt(hdr, int64(id)*w.pageSize); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	overflow := uint64(le.Uint32(hdr[12:16]))
	if id+overflow >= w.hwm {
		return nil, fmt.Errorf("page %d: %d overflow pages run past page %d", id, overflow, w.hwm-1)
	}
	buf := make([]byte, int64(overflow+1)*w.pageSize)
	if _, err := w.f.ReadAt(buf, int64(id)*w.pageSize); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	if got := le.Uint64(buf[0:8]); got != id {
		return nil, fmt.Errorf("page %d says it is page %d", id, got)
	}
	return buf, nil
}

// bucket walks the tree of a bucket whose root is page id.
func (w *pageWalker) bucket(id uint64, depth int) error {
	if depth > 64 {
		return errors.New("buckets or pages nested too deep (a cycle?)")
	}
	p, err := w.page(id)
	if err != nil {
		return err
	}
	return w.node(p, id, depth)
}

// node checks one branch or leaf page (p, which may be an inline bucket's
// page) and walks what it points to.
func (w *pageWalker) node(p []byte, id uint64, depth int) error {
	if len(p) < pageHeaderSize {
		return fmt.Errorf("page %d is too short", id)
	}
	flags, count := le.Uint16(p[8:10]), int(le.Uint16(p[10:12]))
	if pageHeaderSize+count*elementSize > len(p) {
		return fmt.Errorf("page %d: %d elements do not fit", id, count)
	}
	for i := range count {
		at := pageHeaderSize + i*elementSize
		e := p[at : at+elementSize]
		switch flags {
		case flagBranch:
			pos, ksize := int(le.Uint32(e[0:4])), int(le.Uint32(e[4:8]))
			if err := within(p, at+pos, ksize); err != nil {
				return fmt.Errorf("page %d element %d: key %w", id, i, err)
			}
			if err := w.bucket(le.Uint64(e[8:16]), depth+1); err != nil {
				return err
			}
		case flagLeaf:
			eflags := le.Uint32(e[0:4])
			pos, ksize, vsize := int(le.Uint32(e[4:8])), int(le.Uint32(e[8:12])), int(le.Uint32(e[12:16]))
			if err := within(p, at+pos, ksize+vsize); err != nil {
				return fmt.Errorf("page %d element %d: key and value %w", id, i, err)
			}
			if eflags&flagBucket == 0 {
				continue
			}
			v := p[at+pos+ksize : at+pos+ksize+vsize]
			if len(v) < bucketHeaderSize {
				return fmt.Errorf("page %d element %d: bucket header is %d bytes", id, i, len(v))
			}
			if root := le.Uint64(v[0:8]); root != 0 {
				if err := w.bucket(root, depth+1); err != nil {
					return err
				}
			} else if err := w.node(v[bucketHeaderSize:], id, depth+1); err != nil { // inline bucket
				return err
			}
		default:
			return fmt.Errorf("page %d has flags %#x, not a branch or leaf page", id, flags)
		}
	}
	return nil
}

// freelist checks the freelist page and the page IDs it lists.
func (w *pageWalker) freelist(id uint64) error {
	p, err := w.page(id)
	if err != nil {
		return fmt.Errorf("freelist: %w", err)
	}
	if flags := le.Uint16(p[8:10]); flags != flagFreelist {
		return fmt.Errorf("freelist page %d has flags %#x", id, flags)
	}
	start, count := pageHeaderSize, uint64(le.Uint16(p[10:12]))
	if count == 0xFFFF {
		if len(p) < pageHeaderSize+8 {
			return fmt.Errorf("freelist page %d is too short", id)
		}
		count, start = le.Uint64(p[16:24]), pageHeaderSize+8
	}
	if count > uint64(len(p)-start)/8 {
		return fmt.Errorf("freelist page %d: %d page IDs do not fit", id, count)
	}
	for i := range int(count) {
		if free := le.Uint64(p[start+8*i:]); free < 2 || free >= w.hwm {
			return fmt.Errorf("freelist lists page %d, out of bounds", free)
		}
	}
	return nil
}

// within reports whether n bytes at off lie inside p.
func within(p []byte, off, n int) error {
	if off < 0 || n < 0 || off > len(p) || n > len(p)-off {
		return fmt.Errorf("at %d, %d bytes long, runs past its page (%d bytes)", off, n, len(p))
	}
	return nil
}
