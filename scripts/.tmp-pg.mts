import { startEmbeddedPostgres } from '/work/main/src/db/embedded.js';
const s = await startEmbeddedPostgres({ dataDir: '/tmp/pgcli', ephemeral: true, log: () => undefined });
console.log(s.url('postgres'));
setInterval(() => {}, 1000);
