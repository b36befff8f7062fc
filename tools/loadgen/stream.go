package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"time"
)

// request sends one streamed request of o's API and measures it: the
// time to the first event that carries text, the gaps between such
// events, and the token counts the stream reports.
func request(ctx context.Context, o options, rng *rand.Rand) result {
	a := apis[o.api]
	body := a.body(o, rng)
	start := time.Now()
	resp, err := post(ctx, o, a.header, a.path, body)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	return measure(a, resp.Body, start)
}

// measure reads a stream of API a that began (its request sent) at start.
func measure(a *api, body io.Reader, start time.Time) result {
	r := result{prompt: -1}
	generated := -1
	var last time.Time
	ended := false
	err := events(body, a.ndjson, func(event string, data []byte) error {
		if ended {
			return errors.New("an event after the stream's last")
		}
		s, err := a.decode(event, data)
		if err != nil {
			return err
		}
		if s.text {
			now := time.Now()
			if last.IsZero() {
				r.ttft = now.Sub(start)
			} else {
				r.gaps = append(r.gaps, now.Sub(last))
			}
			last = now
		}
		if s.prompt >= 0 {
			r.prompt = s.prompt
		}
		if s.generated >= 0 {
			generated = s.generated
		}
		ended = s.end
		return nil
	})
	switch {
	case err != nil:
		return result{err: err}
	case !ended:
		return result{err: errors.New("the stream ended before its last event")}
	case generated < 0:
		return result{err: errors.New("the stream reported no usage")}
	}
	r.tokens = generated
	r.texted = !last.IsZero()
	if r.tokens > 1 && r.texted {
		r.tpot = time.Since(start.Add(r.ttft)) / time.Duration(r.tokens-1)
	}
	return r
}

// events reads a stream's events and hands each to fn, until fn fails or
// the stream ends: a line of JSON each with ndjson, otherwise server-sent
// events (their "event:" name, and their "data:" lines joined by
// newlines).
func events(body io.Reader, ndjson bool, fn func(event string, data []byte) error) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	var (
		name string
		data []byte
		has  bool // data lines seen since the last event
	)
	dispatch := func() error {
		if !has {
			name = ""
			return nil
		}
		err := fn(name, data)
		name, data, has = "", data[:0], false
		return err
	}
	for sc.Scan() {
		line := sc.Bytes()
		if ndjson {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			if err := fn("", line); err != nil {
				return err
			}
			continue
		}
		if len(line) == 0 {
			if err := dispatch(); err != nil {
				return err
			}
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			if has {
				data = append(data, '\n')
			}
			data, has = append(data, value...), true
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return dispatch()
}
