package grpcdriver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/proto"
)

// stdinChunk bounds the stdin data of one message.
const stdinChunk = 32 << 10

var _ drivers.ExecStreamingPlugin = (*Client)(nil)

type (
	execClientStream = grpc.BidiStreamingClient[proto.ExecTaskStreamingRequest, proto.ExecTaskStreamingResponse]
	execServerStream = grpc.BidiStreamingServer[proto.ExecTaskStreamingRequest, proto.ExecTaskStreamingResponse]
)

// ExecTaskStreaming runs an interactive command in a task of the plugin:
// the setup, then the caller's stdin and terminal sizes go to the plugin;
// its output comes back until the exit result. A plugin whose driver has
// no streaming exec gives drivers.ErrNotSupported.
func (c *Client) ExecTaskStreaming(ctx context.Context, taskID string, opts *drivers.ExecOptions) (*drivers.ExitResult, error) {
	if err := opts.Validate(); err != nil {
		if opts != nil && opts.Stdin != nil {
			opts.Stdin.Close()
		}
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The input goroutines end once inputDone and the caller's stdin are
	// closed.
	var wg sync.WaitGroup
	inputDone := make(chan struct{})
	stopInput := sync.OnceFunc(func() {
		close(inputDone)
		if opts.Stdin != nil {
			opts.Stdin.Close()
		}
		wg.Wait()
	})
	defer stopInput()

	stream, err := c.rpc.ExecTaskStreaming(ctx)
	if err != nil {
		return nil, fromStatus("exec task", err)
	}
	var sendMu sync.Mutex // gRPC streams take one sender at a time
	send := func(m *proto.ExecTaskStreamingRequest) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return stream.Send(m)
	}
	setup := &proto.ExecTaskStreamingSetup{TaskId: taskID, Command: opts.Command, Tty: opts.TTY, Stdin: opts.Stdin != nil}
	if opts.InitialSize != (drivers.TerminalSize{}) {
		setup.InitialSize = sizeToProto(opts.InitialSize)
	}
	if err := send(&proto.ExecTaskStreamingRequest{Message: &proto.ExecTaskStreamingRequest_Setup{Setup: setup}}); err != nil {
		return nil, recvError(stream)
	}
	if opts.Stdin != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sendStdin(opts.Stdin, send)
		}()
	}
	if opts.TTY && opts.Resize != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-inputDone:
					return
				case size, ok := <-opts.Resize:
					if !ok {
						return
					}
					if send(&proto.ExecTaskStreamingRequest{Message: &proto.ExecTaskStreamingRequest_TtySize{TtySize: sizeToProto(size)}}) != nil {
						return
					}
				}
			}
		}()
	}

	stdout, stderr := discardNil(opts.Stdout), discardNil(opts.Stderr)
	for {
		resp, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, errors.New("exec task: driver plugin ended the exec without an exit result")
			}
			return nil, fromStatus("exec task", err)
		}
		switch m := resp.GetMessage().(type) {
		case *proto.ExecTaskStreamingResponse_Stdout:
			if _, err := stdout.Write(m.Stdout); err != nil {
				return nil, fmt.Errorf("exec task: write output: %w", err)
			}
		case *proto.ExecTaskStreamingResponse_Stderr:
			if _, err := stderr.Write(m.Stderr); err != nil {
				return nil, fmt.Errorf("exec task: write output: %w", err)
			}
		case *proto.ExecTaskStreamingResponse_Exited:
			res := exitResultFromProto(m.Exited)
			if res == nil {
				return nil, errors.New("exec task: driver plugin sent an empty exit result")
			}
			// Close our side once nothing sends any more; the plugin
			// then ends the call.
			stopInput()
			_ = stream.CloseSend()
			for {
				if _, err := stream.Recv(); err != nil {
					return res, nil
				}
			}
		}
	}
}

// sendStdin sends in as stdin messages, then stdin_close at its end.
func sendStdin(in io.Reader, send func(*proto.ExecTaskStreamingRequest) error) {
	buf := make([]byte, stdinChunk)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			data := append([]byte(nil), buf[:n]...)
			if send(&proto.ExecTaskStreamingRequest{Message: &proto.ExecTaskStreamingRequest_Stdin{Stdin: data}}) != nil {
				return
			}
		}
		if errors.Is(err, io.EOF) {
			_ = send(&proto.ExecTaskStreamingRequest{Message: &proto.ExecTaskStreamingRequest_StdinClose{StdinClose: true}})
			return
		}
		if err != nil {
			return // closed by the caller: the exec is over
		}
	}
}

// recvError returns the status that ended a stream whose Send failed.
func recvError(stream execClientStream) error {
	for {
		if _, err := stream.Recv(); err != nil {
			return fromStatus("exec task", err)
		}
	}
}

// ExecTaskStreaming serves a streaming exec: it reads the setup, feeds the
// driver the caller's stdin and terminal sizes, and sends the output and
// the exit result.
func (s *Server) ExecTaskStreaming(stream execServerStream) error {
	esp, ok := s.impl.(drivers.ExecStreamingPlugin)
	if !ok {
		return toStatus(fmt.Errorf("exec task: %w", drivers.ErrNotSupported))
	}
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	setup := first.GetSetup()
	if setup == nil {
		return status.Error(codes.InvalidArgument, "exec task: the first message must be the setup")
	}
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()

	var sendMu sync.Mutex
	send := func(m *proto.ExecTaskStreamingResponse) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return stream.Send(m)
	}
	opts := &drivers.ExecOptions{
		Command: setup.GetCommand(),
		TTY:     setup.GetTty(),
		Stdout: writerFunc(func(p []byte) error {
			return send(&proto.ExecTaskStreamingResponse{Message: &proto.ExecTaskStreamingResponse_Stdout{Stdout: append([]byte(nil), p...)}})
		}),
		Stderr: writerFunc(func(p []byte) error {
			return send(&proto.ExecTaskStreamingResponse{Message: &proto.ExecTaskStreamingResponse_Stderr{Stderr: append([]byte(nil), p...)}})
		}),
	}
	if sz := setup.GetInitialSize(); sz != nil {
		opts.InitialSize = sizeFromProto(sz)
	}
	var stdinW *io.PipeWriter
	if setup.GetStdin() {
		var r *io.PipeReader
		r, stdinW = io.Pipe()
		opts.Stdin = r
	}
	resize := make(chan drivers.TerminalSize)
	if opts.TTY {
		opts.Resize = resize
	}
	// The caller's messages, until it closes its side or goes away.
	recvDone := make(chan struct{})
	go func() {
		defer close(recvDone)
		defer func() {
			if stdinW != nil {
				stdinW.Close()
			}
		}()
		for {
			m, err := stream.Recv()
			if err != nil {
				cancel() // the caller went away (or closed after the exit)
				return
			}
			switch m := m.GetMessage().(type) {
			case *proto.ExecTaskStreamingRequest_Stdin:
				if stdinW != nil {
					_, _ = stdinW.Write(m.Stdin) // fails once the driver closed stdin
				}
			case *proto.ExecTaskStreamingRequest_StdinClose:
				if stdinW != nil {
					stdinW.Close()
				}
			case *proto.ExecTaskStreamingRequest_TtySize:
				if opts.TTY {
					select {
					case resize <- sizeFromProto(m.TtySize):
					case <-ctx.Done():
					}
				}
			}
		}
	}()

	res, err := esp.ExecTaskStreaming(ctx, setup.GetTaskId(), opts)
	if err == nil {
		err = send(&proto.ExecTaskStreamingResponse{Message: &proto.ExecTaskStreamingResponse_Exited{Exited: exitResultToProto(res)}})
	}
	if err != nil {
		// The receiving goroutine ends when this returns: gRPC then ends
		// the stream, and its Recv. It cannot be waited for here, as the
		// caller learns of the error only then.
		return toStatus(err)
	}
	// The caller closes its side on the exit result (or goes away).
	<-recvDone
	return nil
}

// writerFunc is an io.Writer calling a function with each write.
type writerFunc func(p []byte) error

func (f writerFunc) Write(p []byte) (int, error) {
	if err := f(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func discardNil(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func sizeToProto(s drivers.TerminalSize) *proto.TerminalSize {
	return &proto.TerminalSize{Height: int64(s.Height), Width: int64(s.Width)}
}

func sizeFromProto(s *proto.TerminalSize) drivers.TerminalSize {
	return drivers.TerminalSize{Height: int(s.GetHeight()), Width: int(s.GetWidth())}
}
