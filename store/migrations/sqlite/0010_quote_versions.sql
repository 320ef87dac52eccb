-- Quote versions, and idempotent changes to a quote.
--
-- quotes.version: 1 when a quote is made, one more with every change to it (its lines saved, its
-- header changed, sent). The API's ETag names it, and a change sent with If-Match is refused when
-- the quote is no longer at a version it names. A quote made before this migration is at 1.
--
-- idempotency_keys: the keys of changes to a quote (PUT /quotes/{id}/lines and PATCH
-- /quotes/{id}) are kept beside those of POST /quotes, one key space per API key or user.
-- operation says what the key was first used for ('create', 'lines' or 'header': a key used for
-- one is refused for another), and version, for a change, the quote's version that change made
-- (NULL for 'create').

ALTER TABLE quotes ADD COLUMN version INTEGER NOT NULL DEFAULT 1;

ALTER TABLE idempotency_keys ADD COLUMN operation TEXT NOT NULL DEFAULT 'create'
    CHECK (operation IN ('create', 'lines', 'header'));
ALTER TABLE idempotency_keys ADD COLUMN version INTEGER;
