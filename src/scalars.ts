import { Kind } from 'graphql';
import { builder } from './builder.js';
import { AppError } from './errors.js';

builder.scalarType('DateTime', {
  description: 'ISO 8601 date-time in UTC, e.g. 2026-01-31T12:00:00.000Z',
  serialize: (value) => value.toISOString(),
  parseValue: (value) => {
    const date = typeof value === 'string' ? new Date(value) : new Date(Number.NaN);
    if (Number.isNaN(date.getTime())) throw new AppError('VALIDATION_ERROR', 'DateTime must be an ISO 8601 string');
    return date;
  },
});

// Money and rates are stored as exact decimals and sent as JSON numbers (the spec's type).
builder.scalarType('Decimal', {
  description: 'Decimal number (money in RON with 2 decimals, or a rate such as 0.21), sent as a JSON number',
  serialize: (value) => (typeof value === 'number' ? value : Number(value.toString())),
  parseValue: (value) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new AppError('VALIDATION_ERROR', 'Decimal must be a finite number');
    return value;
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.INT && ast.kind !== Kind.FLOAT) throw new AppError('VALIDATION_ERROR', 'Decimal must be a number');
    return Number(ast.value);
  },
});

builder.scalarType('JSON', {
  description: 'Free-form JSON value',
  serialize: (value) => value,
  parseValue: (value) => value,
});
