// Fleet: one row per worker; a row opens onto its devices and its own local queue.
import { Fragment, useState } from 'react';
import { PLATFORM_NAMES } from '../../../../api/index.js';
import {
  ageOf,
  devicesByState,
  formatDuration,
  heartbeatState,
  platformSlots,
  quarantineText,
  workerTitle,
} from '../../../model/views.js';
import type { Abilities, WorkerView } from '../../../model/wire.js';
import { path, post } from '../api.js';
import { useNow } from '../hooks.js';
import { useLive } from '../live.js';
import { ActionButton, Grid, State, queueEntryText } from './parts.js';

const HEALTH_TONE = { running: 'good', starting: 'idle', unhealthy: 'bad' } as const;

export function FleetPage({ abilities }: { abilities: Abilities }) {
  const { workers, feed } = useLive();
  const heartbeats = !(feed?.unwatched.includes('heartbeats') ?? false);
  const now = useNow();
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const rows = [...workers.values()].sort((a, b) => workerTitle(a).localeCompare(workerTitle(b)));
  const toggle = (name: string) => {
    const next = new Set(open);
    if (next.has(name)) next.delete(name);
    else next.add(name);
    setOpen(next);
  };
  return (
    <section aria-labelledby="fleet-title">
      <h1 id="fleet-title">Fleet</h1>
      {!abilities.seeWorkers ? (
        <p role="note">You may not list Workers: the fleet is not shown to you.</p>
      ) : null}
      <Grid
        describedBy="fleet-title"
        caption={<>{rows.length} workers</>}
        columns={[
          'Worker',
          'Health',
          'Drained',
          'Heartbeat',
          'Running / limit',
          'RAM budget',
          'Devices',
          'Actions',
        ]}
      >
        {rows.map((worker) => (
          <Fragment key={worker.name}>
            <WorkerRow
              worker={worker}
              now={now}
              abilities={abilities}
              heartbeats={heartbeats}
              open={open.has(worker.name)}
              toggle={() => toggle(worker.name)}
            />
            {open.has(worker.name) ? (
              <tr className="details" data-worker={worker.name}>
                <td colSpan={8}>
                  <WorkerDetails worker={worker} abilities={abilities} now={now} />
                </td>
              </tr>
            ) : null}
          </Fragment>
        ))}
      </Grid>
    </section>
  );
}

function WorkerRow(props: {
  worker: WorkerView;
  now: number;
  abilities: Abilities;
  /** False when the console does not watch heartbeats: their age is unknown, not "never". */
  heartbeats: boolean;
  open: boolean;
  toggle: () => void;
}) {
  const { worker, now } = props;
  const title = workerTitle(worker);
  const beat = heartbeatState(worker, now);
  const age = ageOf(worker.heartbeat?.renewTime, now);
  const slots = platformSlots(worker);
  const counts = devicesByState(worker.devices);
  return (
    <tr data-worker={worker.name}>
      <th scope="row">
        <button
          type="button"
          className="disclosure"
          aria-expanded={props.open}
          aria-controls={`details-${worker.name}`}
          onClick={props.toggle}
        >
          <span aria-hidden="true">{props.open ? '▾' : '▸'} </span>
          {title}
        </button>
        {title !== worker.name ? <div className="sub">{worker.name}</div> : null}
      </th>
      <td>
        <State
          tone={HEALTH_TONE[worker.health ?? 'starting']}
          text={worker.health ?? 'no status'}
        />
      </td>
      <td>{worker.drained ? <State tone="warn" text="Drained" /> : 'No'}</td>
      <td>
        {!props.heartbeats ? (
          <State tone="idle" text="not shown" />
        ) : beat === 'never' ? (
          <State tone="bad" text="never" />
        ) : (
          <State
            tone={beat === 'connected' ? 'good' : 'bad'}
            text={`${formatDuration(age ?? 0)} ago${beat === 'late' ? ' (late)' : ''}`}
          />
        )}
      </td>
      <td>
        {slots.length === 0
          ? '—'
          : slots.map((slot) => (
              <div key={slot.platform}>
                {slot.name} {slot.running}/{slot.limit}
              </div>
            ))}
      </td>
      <td>
        {slots.length === 0
          ? '—'
          : slots.map((slot) => (
              <div key={slot.platform}>
                {slot.name}: {slot.atRamBudget ? <State tone="warn" text="at budget" /> : 'room'}
              </div>
            ))}
      </td>
      <td>
        {counts.length === 0 ? 'none' : counts.map((c) => `${c.count} ${c.state}`).join(', ')}
      </td>
      <td>
        {props.abilities.drainWorkers ? (
          <ActionButton
            label={worker.drained ? 'Undrain' : 'Drain'}
            describe={`${worker.drained ? 'Undrain' : 'Drain'} ${title}`}
            run={() =>
              post(`/api/workers/${path(worker.name)}/${worker.drained ? 'undrain' : 'drain'}`)
            }
          />
        ) : null}
      </td>
    </tr>
  );
}

function WorkerDetails({
  worker,
  abilities,
  now,
}: {
  worker: WorkerView;
  abilities: Abilities;
  now: number;
}) {
  const title = workerTitle(worker);
  return (
    <div id={`details-${worker.name}`} className="worker-details">
      <Grid
        inner
        caption={<>Devices of {title}</>}
        columns={['Device', 'Model', 'OS', 'State', 'Presence']}
      >
        {worker.devices.map((device) => (
          <tr key={device.id} data-device={device.id}>
            <th scope="row">
              {device.name}
              <div className="sub">{device.id}</div>
            </th>
            <td>{device.model}</td>
            <td>
              {PLATFORM_NAMES[device.platform]} {device.os}
            </td>
            <td className="device-state">
              {device.state}
              {device.quarantine ? (
                <div className="sub device-quarantine">
                  {quarantineText(device.quarantine, now)}{' '}
                  {/* Unquarantine patches the Worker's spec, as drain does: the same permission. */}
                  {abilities.drainWorkers ? (
                    <ActionButton
                      label="Unquarantine"
                      describe={`Unquarantine ${device.name} on ${title}`}
                      run={() =>
                        post(
                          `/api/workers/${path(worker.name)}/devices/${path(device.id)}/unquarantine`,
                        )
                      }
                    />
                  ) : null}
                </div>
              ) : null}
            </td>
            <td>
              {!device.physical
                ? 'virtual'
                : device.presence === undefined
                  ? 'not read yet'
                  : device.presence.present
                    ? 'present'
                    : `not present (${device.presence.reason ?? 'unknown'})`}
            </td>
          </tr>
        ))}
      </Grid>
      <Grid
        inner
        caption={
          <>
            Own queue of {title}: {worker.queueDepth} waiting
          </>
        }
        columns={['Request', 'Holder', 'Asks for', 'Why it waits']}
      >
        {worker.queue.map((entry) => (
          <tr key={entry.id}>
            <th scope="row">{entry.id}</th>
            <td>{entry.holder ?? '—'}</td>
            <td>
              {PLATFORM_NAMES[entry.platform]} {entry.model ?? ''}
              {entry.physical ? ', physical' : ''}
            </td>
            <td>{queueEntryText(entry)}</td>
          </tr>
        ))}
      </Grid>
    </div>
  );
}
