package docker

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

func TestConvertStats(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		want drivers.TaskResourceUsage
	}{
		{
			name: "cgroup v1",
			doc: `{"read":"2026-01-01T00:00:01Z","cpu_stats":{"cpu_usage":{"total_usage":300},"system_cpu_usage":2000,"online_cpus":2},
				"precpu_stats":{"cpu_usage":{"total_usage":100},"system_cpu_usage":1000},
				"memory_stats":{"usage":9000,"max_usage":12000,"stats":{"rss":5000,"cache":3000,"swap":10}}}`,
			want: drivers.TaskResourceUsage{CPUPercent: 40, MemoryRSS: 5000, MemoryCache: 3000, MemorySwap: 10, MemoryMaxUsage: 12000},
		},
		{
			name: "cgroup v2",
			doc: `{"read":"2026-01-01T00:00:01Z","cpu_stats":{"cpu_usage":{"total_usage":100,"percpu_usage":[50,50]},"system_cpu_usage":1000},
				"memory_stats":{"usage":9000,"stats":{"anon":4000,"file":2000}}}`,
			want: drivers.TaskResourceUsage{MemoryRSS: 4000, MemoryCache: 2000},
		},
		{
			name: "usage only",
			doc:  `{"read":"2026-01-01T00:00:01Z","memory_stats":{"usage":9000,"stats":{"cache":1000}}}`,
			want: drivers.TaskResourceUsage{MemoryRSS: 8000, MemoryCache: 1000},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s statsJSON
			if err := json.Unmarshal([]byte(tc.doc), &s); err != nil {
				t.Fatal(err)
			}
			got := convertStats(&s)
			tc.want.Timestamp = time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC).UnixNano()
			if got.CPUPercent != tc.want.CPUPercent || got.MemoryRSS != tc.want.MemoryRSS || got.MemoryCache != tc.want.MemoryCache ||
				got.MemorySwap != tc.want.MemorySwap || got.MemoryMaxUsage != tc.want.MemoryMaxUsage || got.Timestamp != tc.want.Timestamp {
				t.Fatalf("convertStats = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestCopyStatsInterval(t *testing.T) {
	// Samples a second apart, an empty one (a stopped container), sent at
	// most every 2s.
	var docs []string
	for i, ts := range []string{"00:00:01", "00:00:02", "00:00:03", "", "00:00:04", "00:00:05"} {
		if ts == "" {
			docs = append(docs, `{"read":"0001-01-01T00:00:00Z"}`)
			continue
		}
		docs = append(docs, `{"read":"2026-01-01T`+ts+`Z","memory_stats":{"stats":{"rss":`+string(rune('1'+i))+`}}}`)
	}
	ch := make(chan *drivers.TaskResourceUsage, 10)
	copyStats(context.Background(), strings.NewReader(strings.Join(docs, "\n")), ch, 2*time.Second)
	close(ch)
	var rss []uint64
	for u := range ch {
		rss = append(rss, u.MemoryRSS)
	}
	if len(rss) != 3 || rss[0] != 1 || rss[1] != 3 || rss[2] != 6 {
		t.Fatalf("sent samples with rss %v, want [1 3 6]", rss)
	}
}
