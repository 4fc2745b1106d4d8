// A line chart in plain SVG (no chart library): a few series over the same points in time, each
// with its own dash pattern and a legend in words, so no line is told apart by colour alone. A
// point with no value is a gap. Every drawn point is a circle with its value in a <title>.
export interface ChartSeries {
  name: string;
  values: (number | undefined)[];
}

const WIDTH = 560;
const HEIGHT = 200;
const LEFT = 56;
const RIGHT = 12;
const TOP = 12;
const BOTTOM = 28;
const DASHES = ['', '6 4', '2 3', '10 3 2 3'];
const COLOURS = ['#0969da', '#bf3989', '#1a7f37', '#9a6700'];

export function LineChart(props: {
  id: string;
  title: string;
  /** The start of each point, for the x axis. */
  times: number[];
  series: ChartSeries[];
  yMax: number;
  formatY: (value: number) => string;
}) {
  const { times, series, yMax, formatY } = props;
  const x = (index: number) =>
    LEFT + (times.length <= 1 ? 0 : ((WIDTH - LEFT - RIGHT) * index) / (times.length - 1));
  const y = (value: number) => TOP + (HEIGHT - TOP - BOTTOM) * (1 - value / (yMax || 1));
  const time = (at: number) =>
    new Date(at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  const ticks = [0, yMax / 2, yMax];
  const xTicks = [0, Math.floor((times.length - 1) / 2), times.length - 1];
  return (
    <figure className="chart" id={props.id}>
      <figcaption>{props.title}</figcaption>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        width={WIDTH}
        height={HEIGHT}
        role="img"
        aria-label={props.title}
      >
        {ticks.map((tick) => (
          <g key={tick}>
            <line x1={LEFT} x2={WIDTH - RIGHT} y1={y(tick)} y2={y(tick)} stroke="#d0d7de" />
            <text x={LEFT - 6} y={y(tick) + 4} textAnchor="end" fontSize="11" fill="#57606a">
              {formatY(tick)}
            </text>
          </g>
        ))}
        {xTicks.map((index) => (
          <text
            key={index}
            x={x(index)}
            y={HEIGHT - 8}
            textAnchor={index === 0 ? 'start' : index === times.length - 1 ? 'end' : 'middle'}
            fontSize="11"
            fill="#57606a"
          >
            {times[index] !== undefined ? time(times[index]) : ''}
          </text>
        ))}
        {series.map((line, number) => (
          <g key={line.name} data-series={line.name}>
            {segments(line.values).map((segment) => (
              <polyline
                key={segment[0]}
                fill="none"
                stroke={COLOURS[number % COLOURS.length]}
                strokeWidth="2"
                strokeDasharray={DASHES[number % DASHES.length]}
                points={segment
                  .map((index) => `${x(index)},${y(line.values[index] ?? 0)}`)
                  .join(' ')}
              />
            ))}
            {line.values.map((value, index) =>
              value === undefined ? null : (
                <circle
                  key={index}
                  className="point"
                  cx={x(index)}
                  cy={y(value)}
                  r="3.5"
                  fill={COLOURS[number % COLOURS.length]}
                >
                  <title>{`${line.name} ${time(times[index] ?? 0)}: ${formatY(value)}`}</title>
                </circle>
              ),
            )}
          </g>
        ))}
      </svg>
      <ul className="legend">
        {series.map((line, number) => (
          <li key={line.name}>
            <svg width="28" height="10" aria-hidden="true">
              <line
                x1="0"
                x2="28"
                y1="5"
                y2="5"
                stroke={COLOURS[number % COLOURS.length]}
                strokeWidth="2"
                strokeDasharray={DASHES[number % DASHES.length]}
              />
            </svg>{' '}
            {line.name}
          </li>
        ))}
      </ul>
    </figure>
  );
}

/** Runs of consecutive points with a value: each is one polyline. */
function segments(values: (number | undefined)[]): number[][] {
  const runs: number[][] = [];
  let run: number[] = [];
  values.forEach((value, index) => {
    if (value === undefined) {
      if (run.length > 0) runs.push(run);
      run = [];
    } else run.push(index);
  });
  if (run.length > 0) runs.push(run);
  return runs;
}
