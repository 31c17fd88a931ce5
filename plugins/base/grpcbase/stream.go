package grpcbase

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc"
)

// Every server stream of a plugin service first sends a response with no
// payload once the plugin has accepted the call, so that its refusal (an
// unknown task) arrives before the caller starts reading; then the
// payloads.

// OpenStream opens a server stream with open and reads its
// acknowledgement, so that the plugin's refusal is returned here, turned
// back into an error by fromStatus. plugin names the plugin in the error of
// a stream that ends before its acknowledgement ("driver plugin").
func OpenStream[R any](ctx context.Context, op, plugin string, fromStatus func(op string, err error) error, open func(context.Context) (grpc.ServerStreamingClient[R], error)) (grpc.ServerStreamingClient[R], error) {
	stream, err := open(ctx)
	if err != nil {
		return nil, fromStatus(op, err)
	}
	if _, err := stream.Recv(); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: %s ended the stream before accepting it", op, plugin)
		}
		return nil, fromStatus(op, err)
	}
	return stream, nil
}

// Pump sends each value of the stream, converted by conv, to ch until the
// stream ends or ctx is done. It returns the stream's error, nil at its end
// or when ctx is done.
func Pump[R, T any](ctx context.Context, stream grpc.ServerStreamingClient[R], ch chan<- T, conv func(*R) T) error {
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case ch <- conv(resp):
		case <-ctx.Done():
			return nil
		}
	}
}

// Forward is the server side: it sends the acknowledgement, then each
// value from ch, converted by conv, until ch closes (nil) or the stream's
// context is done (that error, turned into a status by toStatus).
func Forward[T, R any](stream grpc.ServerStreamingServer[R], ch <-chan T, conv func(T) *R, toStatus func(error) error) error {
	ctx := stream.Context()
	if err := stream.Send(new(R)); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return toStatus(ctx.Err())
		case v, ok := <-ch:
			if !ok {
				return nil
			}
			if err := stream.Send(conv(v)); err != nil {
				return err
			}
		}
	}
}

// ReadStream opens a server stream (see OpenStream) and returns a channel
// that receives its values, converted by conv, until the stream ends or ctx
// is done; then it closes. If the stream fails first and onErr is set, the
// channel receives onErr's value for the stream's error (as received, not
// yet turned back by fromStatus) before it closes; with onErr nil it just
// closes. The goroutine that feeds the channel stops with ctx or the
// stream.
func ReadStream[R, T any](ctx context.Context, op, plugin string, fromStatus func(op string, err error) error, open func(context.Context) (grpc.ServerStreamingClient[R], error), conv func(*R) T, onErr func(error) T) (<-chan T, error) {
	ctx, cancel := context.WithCancel(ctx)
	stream, err := OpenStream(ctx, op, plugin, fromStatus, open)
	if err != nil {
		cancel()
		return nil, err
	}
	ch := make(chan T)
	go func() {
		defer cancel()
		defer close(ch)
		err := Pump(ctx, stream, ch, conv)
		if err == nil || ctx.Err() != nil || onErr == nil {
			return
		}
		select {
		case ch <- onErr(err):
		case <-ctx.Done():
		}
	}()
	return ch, nil
}
