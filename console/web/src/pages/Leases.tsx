// Leases: who holds which device where, until when (counting down), a release button for those
// who may delete the request, and a screenshot of the device through the proxy and its agent. A
// lease whose device crashed and is booted again under it says so, with the cause and estimate.
import { useCallback, useEffect, useState } from 'react';
import { PLATFORM_NAMES } from '../../../../api/index.js';
import { activeLeases, expiresIn, screenshotCommand, workerTitle } from '../../../model/views.js';
import { objectKeyOf, type Abilities, type LeaseView } from '../../../model/wire.js';
import { failureOf, path, post } from '../api.js';
import { useNow } from '../hooks.js';
import { useLive } from '../live.js';
import { ActionButton, Grid } from './parts.js';

export function LeasesPage({ abilities }: { abilities: Abilities }) {
  const { leases, workers } = useLive();
  const now = useNow();
  const [shown, setShown] = useState<LeaseView | undefined>(undefined);
  const rows = activeLeases(leases.values());
  const mayRelease = (namespace: string) =>
    abilities.releaseEverywhere || abilities.releaseIn.includes(namespace);
  return (
    <section aria-labelledby="leases-title">
      <h1 id="leases-title">Leases</h1>
      <Grid
        id="leases"
        caption={<>{rows.length} granted</>}
        columns={['Lease', 'Holder', 'Device', 'Worker', 'Granted at', 'Expires in', 'Actions']}
      >
        {rows.map((lease) => {
          const worker = workers.get(lease.worker);
          const device = lease.device;
          return (
            <tr key={objectKeyOf(lease)} data-lease={objectKeyOf(lease)}>
              <th scope="row">
                {lease.name}
                <div className="sub">{lease.namespace}</div>
              </th>
              <td>{lease.holder ?? '—'}</td>
              <td>
                {device ? (
                  <>
                    {device.name}
                    <div className="sub">
                      {PLATFORM_NAMES[device.platform]} {device.os} · {device.id}
                    </div>
                  </>
                ) : (
                  '—'
                )}
                {lease.recovery ? (
                  <div className="recovering" role="status" data-recovering={lease.recovery.since}>
                    <span className="badge warn">Recovering</span> {lease.recoveryText}
                  </div>
                ) : null}
              </td>
              <td>{worker ? workerTitle(worker) : lease.worker}</td>
              <td>
                {lease.grantedAt ? (
                  <time dateTime={lease.grantedAt}>
                    {new Date(lease.grantedAt).toLocaleString()}
                  </time>
                ) : (
                  '—'
                )}
              </td>
              <td className="expires">{expiresIn(lease.expiresAt, now)}</td>
              <td>
                {device && screenshotCommand(device) ? (
                  <button type="button" onClick={() => setShown(lease)}>
                    Screenshot
                  </button>
                ) : null}{' '}
                {mayRelease(lease.namespace) ? (
                  <ActionButton
                    label="Release"
                    describe={`Release ${lease.name}`}
                    run={() =>
                      post(
                        `/api/namespaces/${path(lease.namespace)}/requests/${path(lease.name)}/release`,
                      )
                    }
                  />
                ) : null}
              </td>
            </tr>
          );
        })}
      </Grid>
      {shown ? <Screenshot lease={shown} key={objectKeyOf(shown)} /> : null}
    </section>
  );
}

function Screenshot({ lease }: { lease: LeaseView }) {
  const [image, setImage] = useState<{ url: string } | { error: string } | undefined>(undefined);
  const take = useCallback(() => {
    setImage(undefined);
    void (async () => {
      const response = await fetch(
        `/api/namespaces/${path(lease.namespace)}/leases/${path(lease.name)}/screenshot`,
      );
      if (!response.ok) {
        const failure = await failureOf(response);
        return setImage({ error: `${failure.code}: ${failure.message}` });
      }
      setImage({ url: URL.createObjectURL(await response.blob()) });
    })();
  }, [lease.namespace, lease.name]);
  useEffect(take, [take]);
  if (image === undefined) {
    return <p role="status">Taking a screenshot of {lease.device?.name ?? lease.name}…</p>;
  }
  return (
    <figure className="screenshot">
      {'url' in image ? (
        <img
          src={image.url}
          alt={`Screen of ${lease.device?.name ?? lease.name}, leased as ${lease.name}`}
        />
      ) : (
        <p role="alert" className="error">
          {image.error}
        </p>
      )}
      <figcaption>
        {lease.device?.name ?? lease.name} ({lease.name}){' '}
        <button type="button" onClick={take}>
          Take again
        </button>
      </figcaption>
    </figure>
  );
}
