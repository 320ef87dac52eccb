-- The context a tenant's pages and tools show things in, and each user's own.
--
-- tenants: the IANA time zone times are shown in, the ISO 4217 currency amounts are in, the
-- units lengths and areas are shown in (metric or imperial), and the theme its users' pages take
-- (light or dark) unless a user chose their own. A tenant made before this migration is in UTC,
-- metric and light, with the currency of its culture code's region where that is one of the
-- common ones below (USD otherwise): an administrator sets them in Settings.
--
-- users: a user's own time zone and theme, NULL where they follow the tenant's.
--
-- live_events: user_id names the one user whose pages hear an event (their own time zone or
-- theme changed); NULL for an event every page of the tenant hears.

ALTER TABLE tenants ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC';
ALTER TABLE tenants ADD COLUMN currency TEXT NOT NULL DEFAULT 'USD';
ALTER TABLE tenants ADD COLUMN units TEXT NOT NULL DEFAULT 'metric';
ALTER TABLE tenants ADD COLUMN theme TEXT NOT NULL DEFAULT 'light';

UPDATE tenants SET currency = CASE upper(substr(culture_code, -2))
    WHEN 'NZ' THEN 'NZD'
    WHEN 'AU' THEN 'AUD'
    WHEN 'GB' THEN 'GBP'
    WHEN 'CA' THEN 'CAD'
    WHEN 'IE' THEN 'EUR'
    WHEN 'DE' THEN 'EUR'
    WHEN 'FR' THEN 'EUR'
    WHEN 'NL' THEN 'EUR'
    WHEN 'ZA' THEN 'ZAR'
    WHEN 'SG' THEN 'SGD'
    WHEN 'IN' THEN 'INR'
    ELSE 'USD'
END;

ALTER TABLE users ADD COLUMN time_zone TEXT;
ALTER TABLE users ADD COLUMN theme TEXT;

ALTER TABLE live_events ADD COLUMN user_id TEXT;
