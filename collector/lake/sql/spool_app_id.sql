-- The spool's identity in the lake, if made.
SELECT app_id FROM lake_spool;
