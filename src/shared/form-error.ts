// What a form (the dashboard's, or a service function behind one) was refused for, field by field,
// so the form can show each message next to its field. Not an AppError: a form is not the API.

export class FormError extends Error {
  /** Field name → what is wrong with it. */
  readonly fields: Record<string, string>;

  constructor(fields: Record<string, string>, message = 'Some fields are invalid') {
    super(message);
    this.name = 'FormError';
    this.fields = fields;
  }
}
