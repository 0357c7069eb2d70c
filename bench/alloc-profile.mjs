// Preloaded (node --import ./bench/alloc-profile.mjs) by bench/deep-pages.ts --only heap: V8's
// sampling heap profiler, counting what is collected too (all that a request allocates, not only
// what survives it). Idle until the first SIGUSR2; the next one writes the profile to
// $ALLOC_PROFILE_OUT (a .heapprofile, which Chrome DevTools opens) and prints "HEAPPROF <file>" on
// stderr. `npx tsx bench/alloc-profile-top.ts FILE` prints its top allocators.

import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const session = new Session();
session.connect();
const post = (method, params) =>
  new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));

let sampling = false;
process.on('SIGUSR2', () => {
  if (!sampling) {
    sampling = true;
    void post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    return;
  }
  sampling = false;
  void post('HeapProfiler.stopSampling').then(({ profile }) => {
    const file = process.env.ALLOC_PROFILE_OUT ?? `alloc-${process.pid}.heapprofile`;
    writeFileSync(file, JSON.stringify(profile));
    process.stderr.write(`HEAPPROF ${file}\n`);
  });
});
