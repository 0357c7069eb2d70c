import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.js';

export type { PrismaClient };

export interface PrismaOptions {
  url: string;
  poolMax: number;
  /** Called once per SQL statement; used for statement counts and metrics. */
  onQuery?: (sql: string, durationMs: number) => void;
}

export function createPrisma({ url, poolMax, onQuery }: PrismaOptions): PrismaClient {
  const adapter = new PrismaPg({ connectionString: url, max: poolMax });
  if (!onQuery) return new PrismaClient({ adapter });
  const prisma = new PrismaClient({ adapter, log: [{ emit: 'event', level: 'query' }] });
  prisma.$on('query', (e) => onQuery(e.query, e.duration));
  return prisma;
}
