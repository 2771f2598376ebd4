-- Retention: delete every signal older than the window, by the day it carries or the day it
-- arrived (whichever is older). $1: the first day still kept.
DELETE FROM signals WHERE day < $1 OR received_day < $1
