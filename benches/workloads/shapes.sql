-- Workload shapes: one query per query shape that falls off a cliff when an
-- engine has no good path for it (issue 7): top-n over a key with 4
-- distinct values against the same top-n over a unique key, string group
-- keys of 10k, 100k and 1M values, computed keys with over a million
-- groups, sparse 2- and 3-column keys, exact and approximate distinct
-- counts per group, filters of hundreds of OR terms, wide arithmetic and
-- window functions over 1k and 1M partitions (issue 33).
-- Table `shapes` (`katydid generate shapes`; the columns are described in
-- datasets/src/shapes.rs). Default scale 10M rows, so s1m sees nearly all
-- of its million values.
-- Format: see README.md beside this file.

-- table: shapes shapes

-- query: topn_ties_asc
-- about: top-n over k4, 4 distinct values: 40 % of the rows tie for the first
-- place. Compared with topn_unique_asc (target: within 2x).
-- check: topn k4
SELECT id, k4 FROM shapes ORDER BY k4 LIMIT 10;

-- query: topn_ties_desc
-- check: topn k4
SELECT id, k4 FROM shapes ORDER BY k4 DESC LIMIT 10;

-- query: topn_ties_offset
-- check: topn k4
SELECT id, k4 FROM shapes ORDER BY k4 LIMIT 10 OFFSET 100000;

-- query: topn_ties_string
-- about: the same over a string key (a dictionary of 4 values).
-- check: topn s4
SELECT id, s4 FROM shapes ORDER BY s4 DESC LIMIT 10;

-- query: topn_unique_asc
-- about: the same top-n over u, unique and in no order.
SELECT id, u FROM shapes ORDER BY u LIMIT 10;

-- query: topn_unique_desc
SELECT id, u FROM shapes ORDER BY u DESC LIMIT 10;

-- query: topn_unique_offset
SELECT id, u FROM shapes ORDER BY u LIMIT 10 OFFSET 100000;

-- query: group_s10k
-- about: GROUP BY a string key of 10k values.
SELECT s10k, count(*) AS c, sum(x) AS s FROM shapes GROUP BY s10k ORDER BY c DESC, s DESC, s10k
LIMIT 10;

-- query: group_s100k
SELECT s100k, count(*) AS c, sum(x) AS s FROM shapes GROUP BY s100k ORDER BY c DESC, s DESC, s100k
LIMIT 10;

-- query: group_s1m
SELECT s1m, count(*) AS c, sum(x) AS s FROM shapes GROUP BY s1m ORDER BY c DESC, s DESC, s1m LIMIT
10;

-- query: computed_key_mod
-- about: a computed key with 2M groups at 10M rows.
SELECT u % 2000000 AS g, count(*) AS c, sum(x) AS s FROM shapes GROUP BY g ORDER BY s DESC, g LIMIT
10;

-- query: computed_key_two_columns
-- about: a key computed from two columns, 10M possible values (about 6.3M
-- groups at 10M rows).
SELECT x * 1000 + g1000 AS g, count(*) AS c, sum(y) AS s FROM shapes GROUP BY g ORDER BY c DESC, g
LIMIT 10;

-- query: sparse_two_keys
-- about: 500 x 500 possible pairs, of which at most 3,000 occur.
SELECT a, b, count(*) AS c FROM shapes GROUP BY a, b;

-- query: sparse_three_keys
-- about: 500 x 500 x 500 possible triples, of which at most 3,000 occur.
SELECT a, b, c, count(*) AS n, sum(x) AS s FROM shapes GROUP BY a, b, c;

-- query: distinct_per_group
-- about: exact distinct count per group over 1,000 groups.
SELECT g1000, count(DISTINCT s100k) AS d FROM shapes GROUP BY g1000;

-- query: approx_distinct_per_group
-- about: approximate distinct count per group over 1,000 groups (HyperLogLog
-- and the like: each engine's estimate, within 10 %).
-- check: approx 0.1
SELECT g1000, approx_count_distinct(s100k) AS d FROM shapes GROUP BY g1000;
-- for: clickhouse
SELECT g1000, uniq(s100k) AS d FROM shapes GROUP BY g1000;
-- for: polars python
shapes.group_by("g1000").agg(pl.col("s100k").approx_n_unique().alias("d"))

-- query: distinct_unique_per_group
-- about: exact distinct count of a unique column over 4 groups (millions of
-- values per group).
SELECT k4, count(DISTINCT u) AS d FROM shapes GROUP BY k4;

-- query: or_300_ints
-- about: 300 OR terms on one integer column.
SELECT count(*) FROM shapes WHERE x = 3 OR x = 31 OR x = 67 OR x = 197 OR x = 233 OR x = 350 OR x =
369 OR x = 378 OR x = 417 OR x = 443 OR x = 451 OR x = 457 OR x = 458 OR x = 474 OR x = 614 OR x =
642 OR x = 763 OR x = 791 OR x = 812 OR x = 861 OR x = 884 OR x = 950 OR x = 965 OR x = 968 OR x =
976 OR x = 994 OR x = 1013 OR x = 1019 OR x = 1028 OR x = 1064 OR x = 1103 OR x = 1126 OR x = 1144
OR x = 1152 OR x = 1186 OR x = 1199 OR x = 1271 OR x = 1319 OR x = 1320 OR x = 1341 OR x = 1359 OR x
= 1389 OR x = 1391 OR x = 1407 OR x = 1408 OR x = 1421 OR x = 1486 OR x = 1491 OR x = 1533 OR x =
1542 OR x = 1596 OR x = 1662 OR x = 1673 OR x = 1674 OR x = 1677 OR x = 1683 OR x = 1688 OR x = 1696
OR x = 1801 OR x = 1889 OR x = 1918 OR x = 1929 OR x = 1934 OR x = 1964 OR x = 2012 OR x = 2028 OR x
= 2056 OR x = 2081 OR x = 2119 OR x = 2146 OR x = 2181 OR x = 2243 OR x = 2281 OR x = 2361 OR x =
2363 OR x = 2386 OR x = 2394 OR x = 2401 OR x = 2433 OR x = 2471 OR x = 2472 OR x = 2476 OR x = 2478
OR x = 2490 OR x = 2554 OR x = 2602 OR x = 2645 OR x = 2659 OR x = 2702 OR x = 2725 OR x = 2736 OR x
= 2753 OR x = 2785 OR x = 2887 OR x = 2924 OR x = 2945 OR x = 2961 OR x = 2987 OR x = 3078 OR x =
3122 OR x = 3172 OR x = 3191 OR x = 3197 OR x = 3222 OR x = 3265 OR x = 3275 OR x = 3348 OR x = 3362
OR x = 3374 OR x = 3407 OR x = 3420 OR x = 3457 OR x = 3486 OR x = 3517 OR x = 3575 OR x = 3612 OR x
= 3622 OR x = 3650 OR x = 3654 OR x = 3657 OR x = 3714 OR x = 3716 OR x = 3780 OR x = 3800 OR x =
3822 OR x = 3922 OR x = 3943 OR x = 3999 OR x = 4056 OR x = 4070 OR x = 4126 OR x = 4132 OR x = 4246
OR x = 4278 OR x = 4304 OR x = 4337 OR x = 4422 OR x = 4552 OR x = 4561 OR x = 4577 OR x = 4619 OR x
= 4662 OR x = 4709 OR x = 4717 OR x = 4744 OR x = 4883 OR x = 4911 OR x = 4919 OR x = 5054 OR x =
5072 OR x = 5109 OR x = 5140 OR x = 5146 OR x = 5220 OR x = 5305 OR x = 5401 OR x = 5447 OR x = 5533
OR x = 5571 OR x = 5572 OR x = 5604 OR x = 5613 OR x = 5627 OR x = 5636 OR x = 5640 OR x = 5685 OR x
= 5691 OR x = 5726 OR x = 5737 OR x = 5741 OR x = 5823 OR x = 5825 OR x = 5827 OR x = 5878 OR x =
5924 OR x = 5926 OR x = 5957 OR x = 5966 OR x = 5974 OR x = 5991 OR x = 6008 OR x = 6049 OR x = 6101
OR x = 6164 OR x = 6233 OR x = 6320 OR x = 6365 OR x = 6405 OR x = 6428 OR x = 6457 OR x = 6468 OR x
= 6485 OR x = 6499 OR x = 6519 OR x = 6521 OR x = 6536 OR x = 6560 OR x = 6564 OR x = 6576 OR x =
6580 OR x = 6804 OR x = 6850 OR x = 6851 OR x = 6864 OR x = 6867 OR x = 6909 OR x = 6955 OR x = 7005
OR x = 7053 OR x = 7104 OR x = 7107 OR x = 7109 OR x = 7219 OR x = 7301 OR x = 7327 OR x = 7353 OR x
= 7359 OR x = 7424 OR x = 7474 OR x = 7481 OR x = 7564 OR x = 7588 OR x = 7624 OR x = 7628 OR x =
7634 OR x = 7701 OR x = 7737 OR x = 7767 OR x = 7768 OR x = 7771 OR x = 7832 OR x = 7841 OR x = 7855
OR x = 7870 OR x = 7889 OR x = 7907 OR x = 7927 OR x = 7945 OR x = 7996 OR x = 8011 OR x = 8073 OR x
= 8088 OR x = 8111 OR x = 8133 OR x = 8134 OR x = 8137 OR x = 8236 OR x = 8313 OR x = 8387 OR x =
8445 OR x = 8459 OR x = 8480 OR x = 8493 OR x = 8604 OR x = 8627 OR x = 8652 OR x = 8654 OR x = 8711
OR x = 8725 OR x = 8758 OR x = 8779 OR x = 8791 OR x = 8858 OR x = 8873 OR x = 8899 OR x = 8974 OR x
= 8983 OR x = 8989 OR x = 9002 OR x = 9014 OR x = 9028 OR x = 9120 OR x = 9143 OR x = 9163 OR x =
9179 OR x = 9246 OR x = 9264 OR x = 9278 OR x = 9286 OR x = 9353 OR x = 9358 OR x = 9388 OR x = 9411
OR x = 9455 OR x = 9469 OR x = 9501 OR x = 9528 OR x = 9548 OR x = 9551 OR x = 9593 OR x = 9652 OR x
= 9679 OR x = 9738 OR x = 9762 OR x = 9842 OR x = 9867 OR x = 9914 OR x = 9977 OR x = 9991 OR x =
9998;

-- query: or_200_mixed
-- about: 200 OR terms over two columns, half of them conjunctions.
SELECT count(*), sum(x) FROM shapes WHERE s100k = 'papa_38399' OR (g1000 = 513 AND x < 173) OR s100k
= 'bravo_76865' OR (g1000 = 333 AND x < 182) OR s100k = 'foxtrot_71349' OR (g1000 = 429 AND x < 477)
OR s100k = 'mike_17180' OR (g1000 = 62 AND x < 428) OR s100k = 'delta_46371' OR (g1000 = 919 AND x <
284) OR s100k = 'papa_86831' OR (g1000 = 597 AND x < 467) OR s100k = 'echo_67732' OR (g1000 = 430
AND x < 473) OR s100k = 'india_65752' OR (g1000 = 133 AND x < 322) OR s100k = 'november_19901' OR
(g1000 = 536 AND x < 311) OR s100k = 'delta_2451' OR (g1000 = 893 AND x < 275) OR s100k =
'alpha_24000' OR (g1000 = 623 AND x < 52) OR s100k = 'charlie_19634' OR (g1000 = 176 AND x < 122) OR
s100k = 'november_62061' OR (g1000 = 633 AND x < 421) OR s100k = 'mike_15772' OR (g1000 = 569 AND x
< 81) OR s100k = 'hotel_42727' OR (g1000 = 698 AND x < 315) OR s100k = 'lima_69563' OR (g1000 = 568
AND x < 297) OR s100k = 'delta_13907' OR (g1000 = 904 AND x < 336) OR s100k = 'hotel_7447' OR (g1000
= 254 AND x < 147) OR s100k = 'india_36296' OR (g1000 = 43 AND x < 445) OR s100k = 'lima_12811' OR
(g1000 = 519 AND x < 281) OR s100k = 'kilo_73626' OR (g1000 = 28 AND x < 439) OR s100k =
'bravo_8305' OR (g1000 = 453 AND x < 216) OR s100k = 'november_80285' OR (g1000 = 996 AND x < 308)
OR s100k = 'hotel_79447' OR (g1000 = 524 AND x < 152) OR s100k = 'november_90797' OR (g1000 = 283
AND x < 281) OR s100k = 'november_66605' OR (g1000 = 546 AND x < 463) OR s100k = 'bravo_62657' OR
(g1000 = 519 AND x < 176) OR s100k = 'papa_91647' OR (g1000 = 535 AND x < 498) OR s100k =
'juliett_34025' OR (g1000 = 944 AND x < 336) OR s100k = 'juliett_26553' OR (g1000 = 860 AND x < 279)
OR s100k = 'golf_17974' OR (g1000 = 426 AND x < 112) OR s100k = 'delta_51427' OR (g1000 = 452 AND x
< 211) OR s100k = 'echo_9508' OR (g1000 = 687 AND x < 173) OR s100k = 'papa_56143' OR (g1000 = 74
AND x < 158) OR s100k = 'foxtrot_87749' OR (g1000 = 310 AND x < 451) OR s100k = 'echo_16036' OR
(g1000 = 918 AND x < 447) OR s100k = 'delta_20243' OR (g1000 = 962 AND x < 416) OR s100k =
'delta_84339' OR (g1000 = 676 AND x < 237) OR s100k = 'echo_18740' OR (g1000 = 259 AND x < 120) OR
s100k = 'lima_61307' OR (g1000 = 224 AND x < 432) OR s100k = 'bravo_12337' OR (g1000 = 407 AND x <
299) OR s100k = 'juliett_21337' OR (g1000 = 683 AND x < 476) OR s100k = 'kilo_29322' OR (g1000 = 165
AND x < 411) OR s100k = 'alpha_56560' OR (g1000 = 527 AND x < 256) OR s100k = 'alpha_44448' OR
(g1000 = 431 AND x < 150) OR s100k = 'golf_46742' OR (g1000 = 326 AND x < 97) OR s100k =
'november_94653' OR (g1000 = 374 AND x < 59) OR s100k = 'lima_44299' OR (g1000 = 567 AND x < 284) OR
s100k = 'delta_57731' OR (g1000 = 720 AND x < 59) OR s100k = 'india_50376' OR (g1000 = 339 AND x <
314) OR s100k = 'delta_81779' OR (g1000 = 302 AND x < 312) OR s100k = 'kilo_8426' OR (g1000 = 115
AND x < 453) OR s100k = 'foxtrot_29957' OR (g1000 = 995 AND x < 498) OR s100k = 'foxtrot_13733' OR
(g1000 = 86 AND x < 185) OR s100k = 'juliett_35641' OR (g1000 = 40 AND x < 448) OR s100k =
'echo_23796' OR (g1000 = 276 AND x < 436) OR s100k = 'foxtrot_16981' OR (g1000 = 839 AND x < 266) OR
s100k = 'juliett_88601' OR (g1000 = 838 AND x < 182) OR s100k = 'india_53208' OR (g1000 = 152 AND x
< 324) OR s100k = 'bravo_67473' OR (g1000 = 584 AND x < 303) OR s100k = 'november_91805' OR (g1000 =
334 AND x < 95) OR s100k = 'bravo_36577' OR (g1000 = 58 AND x < 459) OR s100k = 'mike_90204' OR
(g1000 = 187 AND x < 267) OR s100k = 'delta_9491' OR (g1000 = 275 AND x < 58) OR s100k =
'foxtrot_83157' OR (g1000 = 90 AND x < 460) OR s100k = 'hotel_34151' OR (g1000 = 85 AND x < 361) OR
s100k = 'papa_29151' OR (g1000 = 68 AND x < 185) OR s100k = 'mike_15948' OR (g1000 = 464 AND x < 55)
OR s100k = 'foxtrot_44453' OR (g1000 = 566 AND x < 263) OR s100k = 'echo_35108' OR (g1000 = 636 AND
x < 116) OR s100k = 'papa_5663' OR (g1000 = 539 AND x < 413) OR s100k = 'echo_31252' OR (g1000 = 960
AND x < 106) OR s100k = 'juliett_21161' OR (g1000 = 268 AND x < 75) OR s100k = 'papa_23743' OR
(g1000 = 206 AND x < 209) OR s100k = 'bravo_82401' OR (g1000 = 312 AND x < 321) OR s100k =
'mike_99548' OR (g1000 = 210 AND x < 198) OR s100k = 'bravo_58417' OR (g1000 = 512 AND x < 394) OR
s100k = 'foxtrot_23317' OR (g1000 = 277 AND x < 227) OR s100k = 'mike_2380' OR (g1000 = 256 AND x <
68) OR s100k = 'lima_2011' OR (g1000 = 18 AND x < 425) OR s100k = 'foxtrot_66277' OR (g1000 = 564
AND x < 147) OR s100k = 'juliett_67401' OR (g1000 = 486 AND x < 175) OR s100k = 'echo_58596' OR
(g1000 = 108 AND x < 387) OR s100k = 'kilo_85210' OR (g1000 = 442 AND x < 386) OR s100k =
'alpha_64880' OR (g1000 = 559 AND x < 477) OR s100k = 'charlie_51522' OR (g1000 = 993 AND x < 309)
OR s100k = 'foxtrot_40341' OR (g1000 = 704 AND x < 160) OR s100k = 'juliett_30089' OR (g1000 = 350
AND x < 151) OR s100k = 'hotel_92631' OR (g1000 = 746 AND x < 375) OR s100k = 'juliett_18313' OR
(g1000 = 414 AND x < 227) OR s100k = 'india_7128' OR (g1000 = 857 AND x < 116) OR s100k =
'mike_1868' OR (g1000 = 72 AND x < 370) OR s100k = 'foxtrot_97109' OR (g1000 = 900 AND x < 180) OR
s100k = 'kilo_56458' OR (g1000 = 167 AND x < 78) OR s100k = 'bravo_11073' OR (g1000 = 681 AND x <
480) OR s100k = 'charlie_49922' OR (g1000 = 891 AND x < 309) OR s100k = 'bravo_87889' OR (g1000 =
994 AND x < 194) OR s100k = 'delta_78483' OR (g1000 = 248 AND x < 404) OR s100k = 'lima_38411' OR
(g1000 = 46 AND x < 285) OR s100k = 'golf_24294' OR (g1000 = 161 AND x < 187);

-- query: wide_arithmetic
-- about: 40 sums of arithmetic over three columns, in one scan.
SELECT sum(x * 1 + g1000), sum(y * 1 - x), sum(x * 2 + g1000), sum(y * 2 - x), sum(x * 3 + g1000),
sum(y * 3 - x), sum(x * 4 + g1000), sum(y * 4 - x), sum(x * 5 + g1000), sum(y * 5 - x), sum(x * 6 +
g1000), sum(y * 6 - x), sum(x * 7 + g1000), sum(y * 7 - x), sum(x * 8 + g1000), sum(y * 8 - x),
sum(x * 9 + g1000), sum(y * 9 - x), sum(x * 10 + g1000), sum(y * 10 - x), sum(x * 11 + g1000), sum(y
* 11 - x), sum(x * 12 + g1000), sum(y * 12 - x), sum(x * 13 + g1000), sum(y * 13 - x), sum(x * 14 +
g1000), sum(y * 14 - x), sum(x * 15 + g1000), sum(y * 15 - x), sum(x * 16 + g1000), sum(y * 16 - x),
sum(x * 17 + g1000), sum(y * 17 - x), sum(x * 18 + g1000), sum(y * 18 - x), sum(x * 19 + g1000),
sum(y * 19 - x), sum(x * 20 + g1000), sum(y * 20 - x) FROM shapes;

-- Window functions (issue 33): a running sum, lag and rank over the table
-- partitioned by g1000 (1,000 values, 10,000 rows each at 10M) and by s1m
-- (a million string values, about ten rows each), and the top 3 per group.
-- Each is wrapped to one row (the count and the sum of the window's
-- values) so no engine ships 10M rows back; the ORDER BY is the window's,
-- and the keys make every answer independent of ties.

-- query: window_running_sum_g1000
-- about: sum(x) OVER (PARTITION BY g1000 ORDER BY id), a running sum.
-- check: rows
SELECT count(*), sum(r) FROM (SELECT sum(x) OVER (PARTITION BY g1000 ORDER BY id) AS r FROM shapes) w;
-- for: polars python
shapes.sort("id").select(pl.col("x").cum_sum().over("g1000").alias("r")).select(pl.len(), pl.col("r").sum())

-- query: window_running_sum_s1m
-- check: rows
SELECT count(*), sum(r) FROM (SELECT sum(x) OVER (PARTITION BY s1m ORDER BY id) AS r FROM shapes) w;
-- for: polars python
shapes.sort("id").select(pl.col("x").cum_sum().over("s1m").alias("r")).select(pl.len(), pl.col("r").sum())

-- query: window_lag_g1000
-- about: lag(x) OVER (PARTITION BY g1000 ORDER BY id); ClickHouse's
-- lagInFrame gives 0, not NULL, before a partition's first row, which
-- the sum does not see.
-- check: rows
SELECT count(*), sum(l) FROM (SELECT lag(x) OVER (PARTITION BY g1000 ORDER BY id) AS l FROM shapes) w;
-- for: clickhouse
SELECT count(*), sum(l) FROM (SELECT lagInFrame(x) OVER (PARTITION BY g1000 ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS l FROM shapes) w;
-- for: polars python
shapes.sort("id").select(pl.col("x").shift(1).over("g1000").alias("l")).select(pl.len(), pl.col("l").sum())

-- query: window_lag_s1m
-- check: rows
SELECT count(*), sum(l) FROM (SELECT lag(x) OVER (PARTITION BY s1m ORDER BY id) AS l FROM shapes) w;
-- for: clickhouse
SELECT count(*), sum(l) FROM (SELECT lagInFrame(x) OVER (PARTITION BY s1m ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS l FROM shapes) w;
-- for: polars python
shapes.sort("id").select(pl.col("x").shift(1).over("s1m").alias("l")).select(pl.len(), pl.col("l").sum())

-- query: window_rank_g1000
-- about: rank() OVER (PARTITION BY g1000 ORDER BY x): x has 10,000 values,
-- so ranks tie.
-- check: rows
SELECT count(*), sum(r) FROM (SELECT rank() OVER (PARTITION BY g1000 ORDER BY x) AS r FROM shapes) w;
-- for: polars python
shapes.select(pl.col("x").rank("min").over("g1000").alias("r")).select(pl.len(), pl.col("r").sum())

-- query: window_rank_s1m
-- check: rows
SELECT count(*), sum(r) FROM (SELECT rank() OVER (PARTITION BY s1m ORDER BY x) AS r FROM shapes) w;
-- for: polars python
shapes.select(pl.col("x").rank("min").over("s1m").alias("r")).select(pl.len(), pl.col("r").sum())

-- query: window_top3_g1000
-- about: the top 3 x per g1000 (ties by id), in the subquery form
-- (katydid runs it as a bounded heap per group, no sort).
-- check: rows
SELECT count(*), sum(x), sum(id) FROM (SELECT id, x, row_number() OVER (PARTITION BY g1000 ORDER BY x DESC, id) AS rn FROM shapes) w WHERE rn <= 3;
-- for: polars python
shapes.sort(["x", "id"], descending=[True, False]).group_by("g1000").head(3).select(pl.len(), pl.col("x").sum(), pl.col("id").sum())

-- query: window_top3_s1m
-- check: rows
SELECT count(*), sum(x), sum(id) FROM (SELECT id, x, row_number() OVER (PARTITION BY s1m ORDER BY x DESC, id) AS rn FROM shapes) w WHERE rn <= 3;
-- for: polars python
shapes.sort(["x", "id"], descending=[True, False]).group_by("s1m").head(3).select(pl.len(), pl.col("x").sum(), pl.col("id").sum())
