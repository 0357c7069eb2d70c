import { Kind } from 'graphql';
import { builder } from './builder.js';
import { AppError } from '../shared/errors.js';
import { exactDecimal } from '../rules/money.js';

builder.scalarType('DateTime', {
  description: 'ISO 8601 date-time in UTC, e.g. 2026-01-31T12:00:00.000Z',
  // A direct read (src/db/direct-reads.ts) holds a timestamp as this ISO text already.
  serialize: (value) => (typeof value === 'string' ? value : value.toISOString()),
  parseValue: (value) => {
    const date = typeof value === 'string' ? new Date(value) : new Date(Number.NaN);
    if (Number.isNaN(date.getTime())) throw new AppError('VALIDATION_ERROR', 'DateTime must be an ISO 8601 string');
    return date;
  },
});

// Money and rates are stored as exact decimals and sent as JSON numbers (the spec's type). An
// input is read exactly as written: a literal from its text, never through a binary float.
builder.scalarType('Decimal', {
  description:
    'Decimal number (money in RON with 2 decimals, or a rate such as 0.21), sent as a JSON number. As an input it is read exactly as written; a string of decimal digits ("90.99") is accepted too',
  serialize: (value) => (typeof value === 'number' ? value : Number(value.toString())),
  parseValue: (value) => {
    const amount = exactDecimal(value);
    if (!amount) throw new AppError('VALIDATION_ERROR', 'Decimal must be a finite decimal number');
    return amount;
  },
  parseLiteral: (ast) => {
    const amount = ast.kind === Kind.INT || ast.kind === Kind.FLOAT || ast.kind === Kind.STRING ? exactDecimal(ast.value) : undefined;
    if (!amount) throw new AppError('VALIDATION_ERROR', 'Decimal must be a finite decimal number');
    return amount;
  },
});

builder.scalarType('JSON', {
  description: 'Free-form JSON value',
  serialize: (value) => value,
  parseValue: (value) => value,
});
