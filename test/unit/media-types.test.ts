import { describe, expect, test } from 'vitest';
import { graphqlAnswerType, inOrderOfPreference } from '../../src/graphql/media-types.ts';

describe('the Accept header, in order of preference', () => {
  test('media ranges are ordered by weight, equal weights keeping the order given', () => {
    expect(inOrderOfPreference('application/json;q=0.5, application/graphql-response+json')).toBe('application/graphql-response+json, application/json;q=0.5');
    expect(inOrderOfPreference('application/json, application/graphql-response+json')).toBe('application/json, application/graphql-response+json');
    expect(inOrderOfPreference('text/event-stream;q=0.9, application/json;q=1.0')).toBe('application/json;q=1.0, text/event-stream;q=0.9');
  });

  test('a range of weight 0 is left out, and a header of nothing else accepts nothing', () => {
    expect(inOrderOfPreference('application/json;q=0, application/graphql-response+json;q=0.1')).toBe('application/graphql-response+json;q=0.1');
    expect(inOrderOfPreference('application/json;q=0')).toBeNull();
  });

  test('a weight that is no qvalue counts as none given', () => {
    expect(inOrderOfPreference('application/json;q=nonsense')).toBe('application/json;q=nonsense');
    expect(inOrderOfPreference('application/graphql-response+json;q=, application/json;q=0.5')).toBe('application/graphql-response+json;q=, application/json;q=0.5');
  });

  test('an answer made before yoga takes application/graphql-response+json only when it is preferred to application/json', () => {
    expect(graphqlAnswerType('application/graphql-response+json')).toBe('application/graphql-response+json; charset=utf-8');
    expect(graphqlAnswerType('application/json;q=0.2, application/graphql-response+json')).toBe('application/graphql-response+json; charset=utf-8');
    expect(graphqlAnswerType('application/json, application/graphql-response+json')).toBe('application/json; charset=utf-8');
    expect(graphqlAnswerType('*/*')).toBe('application/json; charset=utf-8');
    expect(graphqlAnswerType(undefined)).toBe('application/json; charset=utf-8');
  });
});
