/** A person's mistake in a form: a message per field, shown next to that field. */
export class FormError extends Error {
  override name = 'FormError';
  constructor(
    readonly fields: Readonly<Record<string, string>>,
    message = 'Please correct the marked fields',
  ) {
    super(message);
  }
}
