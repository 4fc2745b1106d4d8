// Samples of one metric in Prometheus' text format (kube-apiserver's /metrics), with their labels.

export interface MetricSample {
  labels: Record<string, string>;
  value: number;
}

/** Every sample of `name` in `text`. */
export function samplesOf(text: string, name: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const close = line.lastIndexOf('}');
    const labels: Record<string, string> = {};
    for (const match of line.slice(line.indexOf('{') + 1, close).matchAll(/(\w+)="([^"]*)"/g))
      labels[match[1] ?? ''] = match[2] ?? '';
    samples.push({ labels, value: Number(line.slice(close + 1).trim()) });
  }
  return samples;
}
