// A path under neither environment's API.
import { restError } from '../../rest/adapter.ts';
import type { EndpointHandler } from '../endpoints.ts';
import { send } from '../send.ts';

export const answerNowhere: EndpointHandler<'nowhere'> = async ({ res, url }) =>
  send(res, restError(404, 'ResourceNotFound', `No endpoint at ${url.pathname}. The API lives under /v1 (production) and /sandbox/v1 (sandbox).`));
