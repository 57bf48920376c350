// GitHub's secret scanning reports leaked tokens here (integrations/secret-scanning.ts checks its signature).
import { reportLeakedTokens } from '../../integrations/secret-scanning.ts';
import { restError } from '../../rest/adapter.ts';
import type { EdgeEnvironments, EndpointHandler } from '../endpoints.ts';
import { maxBodyBytes, readBody, singleHeader } from '../incoming.ts';
import { send } from '../send.ts';

export function answerSecretScanning(deps: { environments: EdgeEnvironments; clock: () => Date }): EndpointHandler<'secret-scanning'> {
  return async ({ req, res, endpoint, requestId }) => {
    const body = await readBody(req);
    if (body === null) return send(res, restError(413, 'PayloadTooLarge', `The request body exceeds ${maxBodyBytes} bytes.`));
    const report = { keyId: singleHeader(req, 'github-public-key-identifier'), signature: singleHeader(req, 'github-public-key-signature'), body, requestId };
    send(res, await reportLeakedTokens(deps.environments[endpoint.environment].environment, report, deps.clock()));
  };
}
