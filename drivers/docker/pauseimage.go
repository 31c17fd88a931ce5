package docker

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"time"
)

// The local infra image: when the plugin's infra_image is the default
// (Nomad's registry.k8s.io/pause) and the daemon has it not and cannot pull
// it (no registry reachable), the driver imports an image of its own
// instead, made of one static program that waits forever: a hand-made
// ELF executable of a few dozen bytes (no libc, no Go runtime), so that
// nothing has to be built or downloaded.
const (
	localInfraRepo = "drover-pause"
	// localInfraVersion changes when the program does.
	localInfraVersion = "1"
	localInfraPath    = "/pause"
)

// localInfraImage is the reference of the local infra image for this
// architecture; "" where none can be made.
func localInfraImage() string {
	if pauseCode(runtime.GOARCH) == nil {
		return ""
	}
	return localInfraRepo + ":" + localInfraTag()
}

func localInfraTag() string { return localInfraVersion + "-" + runtime.GOARCH }

// pauseCode is the machine code of "forever wait for a signal" for arch,
// and its ELF machine number; nil for an architecture it does not know.
// Killing the container (SIGKILL) ends it; as PID 1 it ignores the rest.
func pauseCode(arch string) *machineCode {
	switch arch {
	case "amd64":
		return &machineCode{machine: 62, code: []byte{
			0xb8, 0x22, 0x00, 0x00, 0x00, // loop: mov eax, 34 (pause)
			0x0f, 0x05, // syscall
			0xeb, 0xf7, // jmp loop
		}}
	case "arm64":
		var code []byte
		for _, ins := range []uint32{
			0xd2800000, // loop: mov x0, #0 (fds)
			0xd2800001, // mov x1, #0 (nfds)
			0xd2800002, // mov x2, #0 (no timeout)
			0xd2800003, // mov x3, #0 (no sigmask)
			0xd2800928, // mov x8, #73 (ppoll)
			0xd4000001, // svc #0
			0x17fffffa, // b loop
		} {
			code = binary.LittleEndian.AppendUint32(code, ins)
		}
		return &machineCode{machine: 183, code: code}
	}
	return nil
}

type machineCode struct {
	machine uint16
	code    []byte
}

// pauseELF is a static ELF64 executable running mc: the ELF header, one
// loadable segment (the whole file, read and execute) and the code.
func pauseELF(mc *machineCode) []byte {
	const (
		base    = 0x400000
		ehsize  = 64
		phsize  = 56
		entryAt = ehsize + phsize
	)
	size := uint64(entryAt + len(mc.code))
	var b bytes.Buffer
	le := binary.LittleEndian
	b.Write([]byte{0x7f, 'E', 'L', 'F', 2 /* 64-bit */, 1 /* little endian */, 1 /* version */, 0 /* System V */})
	b.Write(make([]byte, 8))
	w := func(v any) { _ = binary.Write(&b, le, v) }
	w(uint16(2))              // e_type: executable
	w(mc.machine)             // e_machine
	w(uint32(1))              // e_version
	w(uint64(base + entryAt)) // e_entry
	w(uint64(ehsize))         // e_phoff
	w(uint64(0))              // e_shoff
	w(uint32(0))              // e_flags
	w(uint16(ehsize))         // e_ehsize
	w(uint16(phsize))         // e_phentsize
	w(uint16(1))              // e_phnum
	w(uint16(0))              // e_shentsize
	w(uint16(0))              // e_shnum
	w(uint16(0))              // e_shstrndx
	w(uint32(1))              // p_type: PT_LOAD
	w(uint32(5))              // p_flags: read, execute
	w(uint64(0))              // p_offset
	w(uint64(base))           // p_vaddr
	w(uint64(base))           // p_paddr
	w(size)                   // p_filesz
	w(size)                   // p_memsz
	w(uint64(0x1000))         // p_align
	b.Write(mc.code)
	return b.Bytes()
}

// pauseRootfs is the local infra image's root filesystem as a tarball:
// the pause program alone.
func pauseRootfs(arch string) ([]byte, error) {
	mc := pauseCode(arch)
	if mc == nil {
		return nil, fmt.Errorf("no local infra image for architecture %s: set the docker plugin's infra_image to a pause image the daemon has", arch)
	}
	prog := pauseELF(mc)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: localInfraPath[1:], Mode: 0o755, Size: int64(len(prog)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(prog); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
