package fleet

import (
	"github.com/prometheus/client_golang/prometheus"

	"inferno/server"
)

// metrics are a Fleet's Prometheus metrics.
type metrics struct {
	loaded      prometheus.GaugeFunc
	loadSeconds prometheus.Histogram
	failures    prometheus.Counter
	waiting     prometheus.Gauge
	unloads     *prometheus.CounterVec
	collectors  []prometheus.Collector
}

func (m *metrics) init(f *Fleet) {
	m.loaded = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "inferno_models_loaded", Help: "Models loaded now (of those served).",
	}, func() float64 {
		n := 0
		for _, st := range f.List() {
			if st.State == server.StateLoaded {
				n++
			}
		}
		return float64(n)
	})
	host := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "inferno_models_memory_bytes", Help: "Memory the loaded, loading and closing models take (their budget's measure), by kind.",
		ConstLabels: prometheus.Labels{"memory": "host"},
	}, func() float64 { f.mu.Lock(); defer f.mu.Unlock(); return float64(f.used.Host) })
	gpu := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "inferno_models_memory_bytes", Help: "Memory the loaded, loading and closing models take (their budget's measure), by kind.",
		ConstLabels: prometheus.Labels{"memory": "gpu"},
	}, func() float64 { f.mu.Lock(); defer f.mu.Unlock(); return float64(f.used.GPU) })
	m.loadSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "inferno_model_load_seconds", Help: "Time each model's load took, successful loads only.",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300},
	})
	m.failures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "inferno_model_load_failures_total", Help: "Model loads that failed.",
	})
	m.waiting = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "inferno_model_load_waiting", Help: "Requests waiting for their model to load (or for room to load it).",
	})
	m.unloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "inferno_model_unloads_total", Help: "Models unloaded, by reason: idle (keep-alive), evicted (room for another), shutdown.",
	}, []string{"reason"})
	m.collectors = []prometheus.Collector{m.loaded, host, gpu, m.loadSeconds, m.failures, m.waiting, m.unloads}
}

func (m *metrics) register(r prometheus.Registerer) error {
	for _, c := range m.collectors {
		if err := r.Register(c); err != nil {
			return err
		}
	}
	return nil
}
