-- The spool's identity, made once; no batch sealed yet.
INSERT INTO lake_spool VALUES ($app_id, 0);
