// Preloaded by the benchmark (node --import ./bench/alloc-meter.mjs) into the service and the
// baseline to measure how many bytes of JS heap their requests allocate. Idle until the first
// SIGUSR2; the next SIGUSR2 prints "ALLOC <bytes>" on stderr: what was allocated in between.
//
// Allocation is heap growth between collections: for each GC in the window, the heap used before
// it minus the heap used after the previous one (or at the start), plus the growth since the last
// one. V8's GC profiler reports both sides of every collection; nothing runs while it is idle.

import v8 from 'node:v8';

let profiler;
let startUsed = 0;

process.on('SIGUSR2', () => {
  if (!profiler) {
    profiler = new v8.GCProfiler();
    profiler.start();
    startUsed = v8.getHeapStatistics().used_heap_size;
    return;
  }
  const { statistics } = profiler.stop();
  profiler = undefined;
  let allocated = 0;
  let previous = startUsed;
  for (const gc of statistics) {
    allocated += Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - previous);
    previous = gc.afterGC.heapStatistics.usedHeapSize;
  }
  allocated += Math.max(0, v8.getHeapStatistics().used_heap_size - previous);
  process.stderr.write(`ALLOC ${allocated} ${statistics.length}\n`);
});
