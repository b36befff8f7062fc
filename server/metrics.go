package server

import (
	"net/http"

	"inferno/scheduler"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metric names. The three load gauges follow the Gateway API Inference
// Extension's model-server protocol (TotalQueuedRequests,
// TotalRunningRequests, KVCacheUtilization as a fraction from 0 to 1), so
// that its endpoint picker can route on them (docs/SERVER.md).
const (
	metricWaiting = "inferno_num_requests_waiting"
	metricRunning = "inferno_num_requests_running"
	metricKVUsage = "inferno_kv_cache_usage_perc"
)

// metrics are the server's Prometheus metrics, in a registry of its own.
type metrics struct {
	reg              *prometheus.Registry
	requests         *prometheus.CounterVec
	promptTokens     prometheus.Counter
	cachedTokens     prometheus.Counter
	generationTokens prometheus.Counter
	ttft             prometheus.Histogram
	tpot             prometheus.Histogram
	duration         prometheus.Histogram
	batchSize        prometheus.Histogram
	batchTokens      prometheus.Histogram
	stepSeconds      prometheus.Histogram
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	latency := []float64{0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "inferno_requests_total", Help: "HTTP requests by endpoint and status code.",
	}, []string{"endpoint", "status"})
	m.promptTokens = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "inferno_prompt_tokens_total", Help: "Prompt tokens of the generation requests run.",
	})
	m.cachedTokens = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "inferno_prompt_tokens_cached_total", Help: "Prompt tokens whose keys and values were reused from an earlier request (the prefix cache), not computed again.",
	})
	m.generationTokens = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "inferno_generation_tokens_total", Help: "Tokens generated.",
	})
	m.ttft = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "inferno_time_to_first_token_seconds", Help: "From a generation request's arrival to its first generated token.",
		Buckets: latency,
	})
	m.tpot = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "inferno_time_per_output_token_seconds", Help: "Mean time between generated tokens after the first, per request.",
		Buckets: []float64{0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5},
	})
	m.duration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "inferno_request_duration_seconds", Help: "From a generation request's arrival to its last token.",
		Buckets: latency,
	})
	m.batchSize = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "inferno_batch_size", Help: "Sequences in each forward pass of the batching scheduler.",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512},
	})
	m.batchTokens = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "inferno_batch_tokens", Help: "Tokens in each forward pass of the batching scheduler (decode tokens and prompt chunks).",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048},
	})
	m.stepSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "inferno_step_seconds", Help: "Duration of each forward pass of the batching scheduler.",
		Buckets: []float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5},
	})
	// stat sums f over the schedulers of the models loaded now (the
	// largest for a fraction), 0 before one is loaded. (A counter of a
	// model unloaded drops out of the sum.)
	stat := func(f func(m *Model) float64, most bool) func() float64 {
		return func() float64 {
			var v float64
			s.loadedModels(func(mod *Model) {
				if mod.Scheduler == nil {
					return
				}
				if x := f(mod); most {
					v = max(v, x)
				} else {
					v += x
				}
			})
			return v
		}
	}
	load := func(name, help string, f func(m *Model) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, stat(f, name == metricKVUsage))
	}
	counter := func(name, help string, f func(m *Model) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, stat(f, false))
	}
	m.reg.MustRegister(m.requests, m.promptTokens, m.cachedTokens, m.generationTokens, m.ttft, m.tpot, m.duration,
		load(metricWaiting, "Requests waiting in the queue for a slot (TotalQueuedRequests).",
			func(m *Model) float64 { return float64(m.Scheduler.Stats().Waiting) }),
		load(metricRunning, "Requests holding a slot (TotalRunningRequests).",
			func(m *Model) float64 { return float64(m.Scheduler.Stats().Running) }),
		load(metricKVUsage, "Fraction of the KV cache in use, 0 to 1 (KVCacheUtilization; with several models loaded, the fullest's).",
			func(m *Model) float64 { return m.Scheduler.Stats().KVUtilization() }),
		load("inferno_slots", "Sequences that can run at once (--parallel).",
			func(m *Model) float64 { return float64(m.Scheduler.Stats().Slots) }),
		m.batchSize, m.batchTokens, m.stepSeconds,
		load("inferno_kv_blocks_used", "KV cache blocks held by running requests (paged cache).",
			func(m *Model) float64 { return float64(m.Scheduler.Stats().KV.Used) }),
		load("inferno_kv_blocks_free", "KV cache blocks holding nothing (paged cache).",
			func(m *Model) float64 { return float64(m.Scheduler.Stats().KV.Free) }),
		load("inferno_kv_blocks_cached", "KV cache blocks holding a finished request's prefix for reuse, evicted least recently used first (paged cache).",
			func(m *Model) float64 { return float64(m.Scheduler.Stats().KV.Cached) }),
		counter("inferno_kv_evictions_total", "Cached KV blocks evicted to make room.",
			func(m *Model) float64 { return float64(m.Scheduler.Stats().KV.Evictions) }),
		counter("inferno_preemptions_total", "Running requests whose KV blocks were taken back so others could go on; they were resumed later.",
			func(m *Model) float64 { return float64(m.Scheduler.Stats().Preemptions) }),
		counter("inferno_prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.",
			func(m *Model) float64 { return float64(m.Scheduler.Stats().KV.PromptTokens) }),
		counter("inferno_prefix_cache_hits_total", "Prompt tokens found in the prefix cache (their keys and values reused).",
			func(m *Model) float64 { return float64(m.Scheduler.Stats().KV.CachedTokens) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// ObserveStep records one forward pass of the batching scheduler in the
// batch histograms. It is a scheduler.Config.OnStep.
func (s *Server) ObserveStep(info scheduler.StepInfo) {
	s.metrics.batchSize.Observe(float64(info.Sequences))
	s.metrics.batchTokens.Observe(float64(info.Tokens))
	s.metrics.stepSeconds.Observe(info.Duration.Seconds())
}
