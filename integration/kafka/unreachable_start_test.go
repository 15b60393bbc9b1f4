package kafka_test

import (
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestKafkaUnreachableAtStart: a pipeline that has a checkpoint and finds
// no Kafka bootstrap server at start (a task replaced while the cluster
// restarts) retries for source.outage_window, logging each attempt, as the
// source side does, instead of exiting at once (a restart loop on ECS):
// past the window it exits 1 naming it; a broker that appears within the
// window is used. Without a checkpoint the start still fails at once (a
// wrong address is the likelier cause).
func TestKafkaUnreachableAtStart(t *testing.T) {
	e := itest.NewEnv(t, "kafkadown")
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO orders VALUES (1)`)
	topic := e.Prefix + ".public.orders"
	down := itest.FreeAddr(t) // nothing listens here
	config := func(file, window string) string {
		path := e.WritePipeline(itest.PipelineConfig{File: file, Source: "  outage_window: " + window + "\n"})
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(data), "bootstrap_servers: "+itest.KafkaAddr, "bootstrap_servers: "+down, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}

	// No checkpoint yet: at once.
	start := time.Now()
	out, code := e.Run("run", "--config", config("first.yaml", "30s"))
	if code != 1 || strings.Contains(out, "retrying") || time.Since(start) > 20*time.Second {
		t.Errorf("first start without Kafka: exit %d after %s, want 1 at once without retrying:\n%s", code, time.Since(start).Round(time.Second), out)
	}

	p := e.Start("run", "--config", e.WriteConfig(""))
	itest.WaitOrDump(t, p, 60*time.Second, "row 1", func() bool { return itest.TopicEnd(topic) >= 1 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Out)
	}

	// A checkpoint, Kafka down for longer than the window.
	start = time.Now()
	p = e.Start("run", "--config", config("down.yaml", "4s"))
	code = itest.ExitWithin(t, p, 60*time.Second, "run with Kafka down past the window")
	out = p.Out.String()
	if code != 1 || strings.Count(out, "Kafka unreachable at start") < 3 || !strings.Contains(out, "Kafka unreachable for longer than source.outage_window (4s") {
		t.Errorf("Kafka down past the window: exit %d, want 1 after at least 2 logged retries naming source.outage_window:\n%s", code, out)
	}
	if d := time.Since(start); d < 4*time.Second {
		t.Errorf("exited after %s, before the 4s window", d)
	}

	// A broker appears within the window: the pipeline starts and streams.
	p = e.Start("run", "--config", config("back.yaml", "2m"))
	itest.WaitOrDump(t, p, 30*time.Second, "a logged retry", func() bool { return strings.Contains(p.Out.String(), "Kafka unreachable at start") })
	proxy(t, down, itest.KafkaAddr)
	e.Exec(`INSERT INTO orders VALUES (2)`)
	itest.WaitOrDump(t, p, 90*time.Second, "row 2 once Kafka is reachable", func() bool { return itest.TopicEnd(topic) >= 2 })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Out)
	}
	if !strings.Contains(p.Out.String(), "Kafka reachable again") {
		t.Errorf("no line saying Kafka is reachable again:\n%s", p.Out)
	}
}

// proxy forwards TCP connections on addr to target until the test ends
// (the bootstrap connection only: the cluster advertises target itself).
func proxy(t *testing.T, addr, target string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				u, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer u.Close()
				go func() { io.Copy(u, c); u.Close() }()
				io.Copy(c, u)
			})
		}
	})
}
